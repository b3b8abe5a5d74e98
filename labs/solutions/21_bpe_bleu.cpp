// Grades lab 21's worked solution: tools/lab.sh 21 --solution
#include "labs/solutions/21_bpe_bleu.hpp"

int main() { return lab::bpe_bleu::grade(lab::solutions::bpe_bleu::solution()).exit_code(); }
