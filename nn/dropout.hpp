// nn::Dropout: while training, zeroes each value with probability p and scales
// the others by 1 / (1 - p), so the expected value is unchanged; in eval mode
// (module.eval()) it is the identity. As torch.nn.Dropout.
#pragma once

#include "module.hpp"

#include "../core/random.hpp"

namespace attn::nn {

class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5, Generator& gen = default_generator());

  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  std::string extra_repr() const override;

  double p;

 private:
  Generator* gen_;  // where the random masks come from
};

}  // namespace attn::nn
