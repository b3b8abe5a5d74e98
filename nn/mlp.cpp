#include "mlp.hpp"

#include "../core/ops.hpp"

#include <sstream>

namespace attn::nn {

MLP::MLP(std::vector<std::size_t> sizes, Activation activation, double dropout, bool activate_last, Generator& gen)
    : Module("MLP"), sizes(std::move(sizes)), activation(activation), dropout(dropout),
      activate_last(activate_last), gen_(&gen) {
  if (this->sizes.size() < 2)
    throw ValueError("MLP: sizes needs at least an input and an output size, got " + shape_str(this->sizes));
  if (!(dropout >= 0.0 && dropout <= 1.0))
    throw ValueError("MLP: dropout probability must be between 0 and 1, got " + std::to_string(dropout));
  for (std::size_t i = 0; i + 1 < this->sizes.size(); ++i)
    layers.emplace_back(this->sizes[i], this->sizes[i + 1], true, gen);
  register_module("layers", layers);
}

Tensor MLP::forward(const Tensor& x) const {
  Tensor h = x;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    h = layers[i](h);  // [..., sizes[i]] -> [..., sizes[i + 1]]
    const bool last = i + 1 == layers.size();
    if (!last || activate_last) {
      h = activate(activation, h);
      if (dropout > 0.0) h = attn::dropout(h, dropout, is_training(), *gen_);
    }
  }
  return h;
}

std::string MLP::extra_repr() const {
  std::ostringstream os;
  os << "sizes=" << shape_str(sizes) << ", activation=" << activation_name(activation) << ", dropout=" << dropout;
  if (activate_last) os << ", activate_last=true";
  return os.str();
}

}  // namespace attn::nn
