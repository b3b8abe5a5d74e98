// Grades lab 6's worked solution: tools/lab.sh 6 --solution
#include "labs/solutions/06_heads.hpp"

int main() { return lab::heads::grade(lab::solutions::heads::solution()).exit_code(); }
