#include "rotary.hpp"

#include "../../core/ops.hpp"

#include <cmath>
#include <string>

namespace attn::nn {

Tensor rotary_embedding(const Tensor& x, std::size_t start, double base) {
  if (!x.defined() || x.dim() < 2 || x.size(-1) % 2 != 0 || x.size(-1) == 0)
    throw ShapeError("rotary_embedding: expected x [..., T, d] with d even and positive, got " +
                     (x.defined() ? shape_str(x.shape()) : std::string("undefined")));
  if (!(base > 1.0)) throw ValueError("rotary_embedding: base must be greater than 1, got " + std::to_string(base));
  const std::size_t T = x.size(-2), d = x.size(-1), half = d / 2;
  // The angles p theta_k of positions start .. start + T - 1: constants, [T, d / 2].
  xt::xarray<double> c = xt::zeros<double>({T, half}), s = xt::zeros<double>({T, half});
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t k = 0; k < half; ++k) {
      const double angle = double(start + t) * std::pow(base, -2.0 * double(k) / double(d));
      c(t, k) = std::cos(angle);
      s(t, k) = std::sin(angle);
    }
  const Tensor cos_t = tensor(c).to(x.dtype()), sin_t = tensor(s).to(x.dtype());  // [T, d/2], broadcast over [...]
  const Tensor x1 = narrow(x, -1, 0, half), x2 = narrow(x, -1, half, half);      // [..., T, d/2] each
  return concat({x1 * cos_t - x2 * sin_t, x2 * cos_t + x1 * sin_t}, -1);         // [..., T, d]
}

}  // namespace attn::nn
