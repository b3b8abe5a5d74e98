// Lab 9's grader: one step of Adam (labs/09_adam/README.md).
//
//   lab::adam::grade(lab::adam::Adam{adam_step});  // "lab 9: k of M checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace adam {

using Array = xt::xarray<double>;

struct Adam {
  // Step t (1, 2, ...) of torch.optim.Adam without weight decay, in place: the parameter p, its
  // first and second moments m and v (all of g's shape) from the gradient g.
  std::function<void(Array& p, const Array& g, Array& m, Array& v, long t, double lr, double beta1, double beta2,
                     double eps)>
      step;
};

// Runs every check on the learner's function, printing each to `os`.
Result grade(const Adam& a, std::ostream& os = std::cout);

}  // namespace adam
}  // namespace lab
