// Grades lab 11's worked solution: tools/lab.sh 11 --solution
#include "labs/solutions/11_encoder_layer.hpp"

int main() { return lab::encoder::grade(lab::solutions::encoder::solution()).exit_code(); }
