// Grades lab 13's worked solution: tools/lab.sh 13 --solution
#include "labs/solutions/13_online_softmax.hpp"

int main() { return lab::online_softmax::grade(lab::solutions::online_softmax::solution()).exit_code(); }
