// Grades lab 12's worked solution: tools/lab.sh 12 --solution
#include "labs/solutions/12_luong.hpp"

int main() { return lab::luong::grade(lab::solutions::luong::solution()).exit_code(); }
