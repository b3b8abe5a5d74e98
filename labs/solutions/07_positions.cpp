// Grades lab 7's worked solution: tools/lab.sh 7 --solution
#include "labs/solutions/07_positions.hpp"

int main() { return lab::positions::grade(lab::solutions::positions::solution()).exit_code(); }
