// Grades lab 15's worked solution: tools/lab.sh 15 --solution
#include "labs/solutions/15_monotonic.hpp"

int main() { return lab::monotonic::grade(lab::solutions::monotonic::solution()).exit_code(); }
