// Grades lab 4's worked solution: tools/lab.sh 4 --solution
#include "labs/solutions/04_additive.hpp"

int main() { return lab::additive::grade(lab::solutions::additive::solution()).exit_code(); }
