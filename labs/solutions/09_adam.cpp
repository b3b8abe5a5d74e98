// Grades lab 9's worked solution: tools/lab.sh 9 --solution
#include "labs/solutions/09_adam.hpp"

int main() { return lab::adam::grade(lab::solutions::adam::solution()).exit_code(); }
