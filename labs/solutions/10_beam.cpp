// Grades lab 10's worked solution: tools/lab.sh 10 --solution
#include "labs/solutions/10_beam.hpp"

int main() { return lab::beam::grade(lab::solutions::beam::solution()).exit_code(); }
