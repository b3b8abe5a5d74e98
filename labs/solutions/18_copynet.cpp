// Grades lab 18's worked solution: tools/lab.sh 18 --solution
#include "labs/solutions/18_copynet.hpp"

int main() { return lab::copynet::grade(lab::solutions::copynet::solution()).exit_code(); }
