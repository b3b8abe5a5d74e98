// Grades lab 20's worked solution: tools/lab.sh 20 --solution
#include "labs/solutions/20_coverage_aer.hpp"

int main() { return lab::coverage_aer::grade(lab::solutions::coverage_aer::solution()).exit_code(); }
