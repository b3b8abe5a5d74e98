// Grades lab 23's worked solution: tools/lab.sh 23 --solution
#include "labs/solutions/23_conv2d.hpp"

int main() { return lab::conv2d::grade(lab::solutions::conv2d::solution()).exit_code(); }
