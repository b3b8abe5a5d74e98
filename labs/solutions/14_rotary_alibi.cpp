// Grades lab 14's worked solution: tools/lab.sh 14 --solution
#include "labs/solutions/14_rotary_alibi.hpp"

int main() { return lab::rotary_alibi::grade(lab::solutions::rotary_alibi::solution()).exit_code(); }
