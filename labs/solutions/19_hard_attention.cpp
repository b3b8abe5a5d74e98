// Grades lab 19's worked solution: tools/lab.sh 19 --solution
#include "labs/solutions/19_hard_attention.hpp"

int main() { return lab::hard_attention::grade(lab::solutions::hard_attention::solution()).exit_code(); }
