// Grades lab 1's worked solution: tools/lab.sh 1 --solution
#include "labs/solutions/01_softmax.hpp"

int main() { return lab::softmax::grade(lab::solutions::softmax::solution()).exit_code(); }
