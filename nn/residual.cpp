#include "residual.hpp"

#include "../core/ops.hpp"

namespace attn::nn {

Tensor Residual::forward(const Tensor& x) const {
  Tensor fx = fn_(x);
  if (fx.shape() != x.shape())
    throw ShapeError("Residual: f(x) must keep the shape of x, got x " + shape_str(x.shape()) + " and f(x) " +
                     shape_str(fx.shape()));
  return x + fx;
}

}  // namespace attn::nn
