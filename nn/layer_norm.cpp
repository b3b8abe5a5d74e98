#include "layer_norm.hpp"

#include "../core/backend/fused.hpp"
#include "../core/ops.hpp"

#include <sstream>

namespace attn::nn {

LayerNorm::LayerNorm(Shape normalized_shape, double eps, bool elementwise_affine)
    : Module("LayerNorm"), normalized_shape(std::move(normalized_shape)), eps(eps),
      elementwise_affine(elementwise_affine) {
  if (this->normalized_shape.empty())
    throw ValueError("LayerNorm: normalized_shape must have at least one dim");
  if (elementwise_affine) {
    weight = ones(this->normalized_shape);
    bias = zeros(this->normalized_shape);
    register_parameter("weight", weight);
    register_parameter("bias", bias);
  }
}

Tensor LayerNorm::forward(const Tensor& x) const {
  if (!x.defined()) throw ValueError("LayerNorm: the input tensor is undefined");
  const Shape shape = x.shape();
  const std::size_t k = normalized_shape.size();
  if (shape.size() < k || !std::equal(normalized_shape.begin(), normalized_shape.end(), shape.end() - k))
    throw ShapeError("LayerNorm: expected input [..., " + shape_str(normalized_shape).substr(1) + ", got " +
                     shape_str(shape));
  // One fused op (core/backend/layer_norm.cpp): (x - mean) / sqrt(var + eps) * weight + bias over the last k dims
  // (without elementwise_affine, weight and bias are undefined: layer_norm then skips them)
  return layer_norm(x, normalized_shape, weight, bias, eps);
}

std::string LayerNorm::extra_repr() const {
  std::ostringstream os;
  os << shape_str(normalized_shape) << ", eps=" << eps << ", elementwise_affine=" << (elementwise_affine ? "true" : "false");
  return os.str();
}

}  // namespace attn::nn
