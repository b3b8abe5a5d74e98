// Grades lab 17's worked solution: tools/lab.sh 17 --solution
#include "labs/solutions/17_pointer_sentinel.hpp"

int main() { return lab::pointer_sentinel::grade(lab::solutions::pointer_sentinel::solution()).exit_code(); }
