// Dropout ("inverted" dropout, as PyTorch): while training, each value is
// zeroed with probability p and the survivors are scaled by 1 / (1 - p), so
// the expected value of every output equals its input and evaluation needs
// no rescaling: dropout is then the identity.
#include "../ops.hpp"
#include "../record.hpp"

#include <cstdint>
#include <sstream>

namespace attn {

namespace {

// SplitMix64's output function (Steele, Lea and Flood 2014): a well-mixed 64-bit
// hash of z, so that neighbouring counters give unrelated bits.
std::uint64_t splitmix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The mask's values, from the call's key. target_clones compiles this loop twice,
// for AVX2 and for any x86-64, and the CPU picks at load time: with AVX2 the
// hash runs 4 values at a time (3x faster here).
template <class T>
__attribute__((target_clones("avx2", "default")))
void fill_mask(T* m, std::size_t n, std::uint64_t key, std::uint64_t threshold, T scale) {
  auto value = [&](std::uint64_t bits32) { return bits32 < threshold ? T(0) : scale; };
  for (std::size_t j = 0; j < n / 2; ++j) {
    const std::uint64_t bits = splitmix64(key + j * 0x9e3779b97f4a7c15ull);
    m[2 * j] = value(bits & 0xffffffffu);
    m[2 * j + 1] = value(bits >> 32);
  }
  if (n % 2) m[n - 1] = value(splitmix64(key + (n / 2) * 0x9e3779b97f4a7c15ull) & 0xffffffffu);
}

template <class T>
Tensor dropout_(const Tensor& x, double p, Generator& gen) {
  // mask[i] = 0 (dropped, probability p) or 1 / (1 - p) (kept).
  // Counter-based, like PyTorch's Philox: one draw of gen gives this call a key,
  // and the pair of values 2j, 2j+1 takes the 64 bits splitmix64(key + j * golden),
  // 32 bits each. A value is dropped when its 32 bits u < p * 2^32. Much faster
  // than a draw of gen per value, and as reproducible: the same seed, the same masks.
  const std::uint64_t key = gen.engine()();
  const std::uint64_t threshold = static_cast<std::uint64_t>(p * 4294967296.0);  // p * 2^32
  const T scale = p < 1.0 ? static_cast<T>(1.0 / (1.0 - p)) : T(0);
  xt::xarray<T> mask = xt::xarray<T>::from_shape(x.shape());
  fill_mask(mask.data(), mask.size(), key, threshold, scale);
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
