// Grades lab 0's worked solution: tools/lab.sh 0 --solution
#include "labs/solutions/00_engine.hpp"

int main() { return lab::engine::grade(lab::solutions::engine::solution()).exit_code(); }
