// nn::Residual: y = x + f(x), the skip connection of ResNets and the
// Transformer (He et al., 2016). The gradient reaches x directly through the
// `+`, however deep f is.
//
//   attn::nn::Linear fc(8, 8);
//   attn::nn::Residual block(fc);             // registers fc as child "fn"
//   attn::nn::Residual act([](const Tensor& x) { return attn::tanh(x); });
//
// f(x) must have the shape of x.
#pragma once

#include "module.hpp"

#include <functional>
#include <type_traits>

namespace attn::nn {

class Residual : public Module {
 public:
  using Fn = std::function<Tensor(const Tensor&)>;

  // Any callable; modules it uses are not registered (their owner registers them).
  explicit Residual(Fn fn) : Module("Residual"), fn_(std::move(fn)) {}

  // A module: called as fn(x) and registered as the child "fn", so its
  // parameters are listed as "fn.weight", ...
  template <class M, class = std::enable_if_t<std::is_base_of_v<Module, M>>>
  explicit Residual(M& module) : Module("Residual"), fn_([&module](const Tensor& x) { return module(x); }) {
    register_module("fn", module);
  }

  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }

 private:
  Fn fn_;
};

}  // namespace attn::nn
