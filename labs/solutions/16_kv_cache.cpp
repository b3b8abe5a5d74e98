// Grades lab 16's worked solution: tools/lab.sh 16 --solution
#include "labs/solutions/16_kv_cache.hpp"

int main() { return lab::kv_cache::grade(lab::solutions::kv_cache::solution()).exit_code(); }
