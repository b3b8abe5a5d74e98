// Grades lab 5's worked solution: tools/lab.sh 5 --solution
#include "labs/solutions/05_sdpa.hpp"

int main() { return lab::sdpa::grade(lab::solutions::sdpa::solution()).exit_code(); }
