#include "dropout.hpp"

#include "../core/ops.hpp"

#include <sstream>

namespace attn::nn {

Dropout::Dropout(double p, Generator& gen) : Module("Dropout"), p(p), gen_(&gen) {
  if (!(p >= 0.0 && p <= 1.0))
    throw ValueError("Dropout: probability p must be between 0 and 1, got " + std::to_string(p));
}

Tensor Dropout::forward(const Tensor& x) const { return dropout(x, p, is_training(), *gen_); }

std::string Dropout::extra_repr() const {
  std::ostringstream os;
  os << "p=" << p;
  return os.str();
}

}  // namespace attn::nn
