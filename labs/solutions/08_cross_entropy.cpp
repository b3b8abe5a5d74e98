// Grades lab 8's worked solution: tools/lab.sh 8 --solution
#include "labs/solutions/08_cross_entropy.hpp"

int main() { return lab::cross_entropy::grade(lab::solutions::cross_entropy::solution()).exit_code(); }
