// Lab 9: one step of Adam.
// What to write: labs/09_adam/README.md. Check it: tools/lab.sh 9 (your copy is labs/work/09_adam.cpp).
#include "labs/grader/lab09_adam.hpp"

using Array = xt::xarray<double>;

// ---- your code ----
// Step t (1, 2, ...): update m, v and then p, in place. All arrays have g's shape.
// Tools: xtensor's elementwise expressions (p -= ..., xt::sqrt(v), g * g), std::pow(beta1, t).
void adam_step(Array& p, const Array& g, Array& m, Array& v, long t, double lr, double beta1, double beta2,
               double eps) {
  lab::not_implemented("adam_step");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::adam::Adam mine{adam_step};
  return lab::adam::grade(mine).exit_code();
}
#endif
