// Dropout ("inverted" dropout, as PyTorch): while training, each value is
// zeroed with probability p and the survivors are scaled by 1 / (1 - p), so
// the expected value of every output equals its input and evaluation needs
// no rescaling: dropout is then the identity.
#include "../ops.hpp"
#include "../record.hpp"

#include <random>
#include <sstream>

namespace attn {

namespace {

template <class T>
Tensor dropout_(const Tensor& x, double p, Generator& gen) {
  // mask[i] = 0 (dropped, probability p) or 1 / (1 - p) (kept); drawn from gen in row-major order
  // (the same draws as gen.uniform(), but inlined: a call per value cost more than the draw)
  xt::xarray<T> mask = xt::zeros<T>(x.shape());
  if (p < 1.0) {
    const T scale = static_cast<T>(1.0 / (1.0 - p));
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (T& m : mask) m = uniform(gen.engine()) < p ? T(0) : scale;
  }
  xt::xarray<T> y = x.data<T>() * mask;
  return record<T>("dropout", std::move(y), {x}, [mask = std::move(mask)](Node<T>& out) {
    // d (x * mask)/dx = mask: the same values are dropped and scaled in the gradient
    out.add_to_input_grad(0, out.grad * mask);
  });
}

}  // namespace

Tensor dropout(const Tensor& x, double p, bool training, Generator& gen) {
  check_inputs("dropout", {&x});
  if (!(p >= 0.0 && p <= 1.0)) {  // also rejects NaN
    std::ostringstream message;
    message << "dropout: expected a probability 0 <= p <= 1, got p = " << p;
    throw ValueError(message.str());
  }
  if (!training || p == 0.0) return x;
  return ATTN_DISPATCH(x.dtype(), dropout_, x, p, gen);
}

}  // namespace attn
