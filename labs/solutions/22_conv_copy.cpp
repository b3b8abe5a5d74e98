// Grades lab 22's worked solution: tools/lab.sh 22 --solution
#include "labs/solutions/22_conv_copy.hpp"

int main() { return lab::conv_copy::grade(lab::solutions::conv_copy::solution()).exit_code(); }
