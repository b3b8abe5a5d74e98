// Grades lab 3's worked solution: tools/lab.sh 3 --solution
#include "labs/solutions/03_lstm_cell.hpp"

int main() { return lab::lstm::grade(lab::solutions::lstm::solution()).exit_code(); }
