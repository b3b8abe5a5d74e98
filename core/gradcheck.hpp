// Gradient checking by central finite differences, in double precision.
//
//   auto report = attn::gradcheck([](const std::vector<Tensor>& in) {
//     return my_layer(in[0], in[1]);
//   }, {x, w});
//   CHECK(report.ok);  // or CHECK_GRADCHECK(f, {x, w}) from gradcheck_doctest.hpp
//
// f may return a tensor of any shape: gradcheck compares the gradients of
// sum(f(inputs) * r) for a fixed random r, which checks every output at once.
// Inputs that require grad are compared; the others are held fixed.
#pragma once

#include "tensor.hpp"

#include <functional>
#include <string>

namespace attn {

struct GradcheckOptions {
  double eps = 1e-6;   // finite-difference step
  double atol = 1e-5;  // element passes if |analytic - numeric| <= atol + rtol * |numeric|
  double rtol = 1e-3;
  std::uint64_t seed = 0;  // for the random output weights r
};

struct GradcheckInputReport {
  std::size_t input = 0;       // position in the inputs vector
  Shape shape;
  double max_abs_error = 0.0;  // max |analytic - numeric|
  double max_rel_error = 0.0;  // max |analytic - numeric| / max(|numeric|, 1e-8)
  Shape worst_index;           // where the largest (tolerance-scaled) error sits
  double analytic_at_worst = 0.0;
  double numeric_at_worst = 0.0;
  bool ok = true;
};

struct GradcheckReport {
  bool ok = true;
  std::vector<GradcheckInputReport> inputs;
  std::string str() const;  // one line per input, for test failure messages
};

using GradcheckFn = std::function<Tensor(const std::vector<Tensor>&)>;

// Throws ValueError when an input that requires grad is not float64, and when no
// input requires grad (nothing would be checked). A NaN anywhere (value, analytic
// or numeric gradient) fails the check and shows as nan in the report.
GradcheckReport gradcheck(const GradcheckFn& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options = {});

}  // namespace attn
