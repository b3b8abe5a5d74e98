// Lab 9's worked solution (the library's own: nn/adam.cpp, a fused loop over the arrays).
#pragma once

#include "labs/grader/lab09_adam.hpp"

#include <cmath>

namespace lab {
namespace solutions {
namespace adam {

using Array = xt::xarray<double>;

inline void adam_step(Array& p, const Array& g, Array& m, Array& v, long t, double lr, double beta1, double beta2,
                      double eps) {
  m = beta1 * m + (1.0 - beta1) * g;      // running mean of the gradient
  v = beta2 * v + (1.0 - beta2) * g * g;  // running mean of its square
  // m and v start at 0, so early averages are too small by (1 - beta^t): divide it out.
  double m_scale = 1.0 / (1.0 - std::pow(beta1, static_cast<double>(t)));
  double v_scale = 1.0 / (1.0 - std::pow(beta2, static_cast<double>(t)));
  p -= lr * (m * m_scale) / (xt::sqrt(v * v_scale) + eps);
}

inline lab::adam::Adam solution() { return {adam_step}; }

}  // namespace adam
}  // namespace solutions
}  // namespace lab
