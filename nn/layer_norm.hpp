// nn::LayerNorm: normalizes each vector over its last dims to mean 0 and
// variance 1, then scales and shifts it by learned weight and bias, as
// torch.nn.LayerNorm (Ba et al., 2016):
//
//   y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias
//
// mean and the biased variance (divide by n, not n - 1) are taken over the
// last normalized_shape.size() dims, separately for every position.
//
//   attn::nn::LayerNorm norm(512);  // x [B, T, 512] -> y [B, T, 512]
#pragma once

#include "module.hpp"

namespace attn::nn {

class LayerNorm : public Module {
 public:
  explicit LayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  explicit LayerNorm(std::size_t normalized_size, double eps = 1e-5, bool elementwise_affine = true)
      : LayerNorm(Shape{normalized_size}, eps, elementwise_affine) {}

  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  std::string extra_repr() const override;

  Shape normalized_shape;
  double eps;
  bool elementwise_affine;
  Tensor weight;  // normalized_shape, starts at 1 (undefined without elementwise_affine)
  Tensor bias;    // normalized_shape, starts at 0
};

}  // namespace attn::nn
