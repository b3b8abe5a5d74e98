// Grades lab 2's worked solution: tools/lab.sh 2 --solution
#include "labs/solutions/02_layer_norm.hpp"

int main() { return lab::layer_norm::grade(lab::solutions::layer_norm::solution()).exit_code(); }
