// Dropout ("inverted" dropout, as PyTorch): while training, each value is
// zeroed with probability p and the survivors are scaled by 1 / (1 - p), so
// the expected value of every output equals its input and evaluation needs
// no rescaling: dropout is then the identity.
#include "../ops.hpp"
#include "../record.hpp"

#include <cstdint>
#include <sstream>
#include <vector>

namespace attn {

namespace {

// SplitMix64's output function (Steele, Lea and Flood 2014): a well-mixed 64-bit
// hash of z, so that neighbouring counters give unrelated bits.
std::uint64_t splitmix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Which values survive: keep[i] = 1 (kept) or 0 (dropped, probability p).
// Counter-based, like PyTorch's Philox: the call's key and the counter j give
// the 64 bits splitmix64(key + j * golden) for the pair of values 2j and 2j + 1,
// 32 bits each, and a value is dropped when its 32 bits are below p * 2^32.
// target_clones compiles the loop three times, and the CPU picks at load time:
// with AVX2 the hash runs 4 counters at a time, with AVX-512 (x86-64-v4) 8, and
// its 64-bit multiplies are single instructions (0.47 -> 0.22 ns a value here).
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
void fill_keep(std::uint8_t* keep, std::size_t n, std::uint64_t key, double p) {
  const std::uint64_t threshold = static_cast<std::uint64_t>(p * 4294967296.0);  // p * 2^32
  auto kept = [threshold](std::uint64_t bits32) { return static_cast<std::uint8_t>(bits32 >= threshold); };
  for (std::size_t j = 0; j < n / 2; ++j) {
    const std::uint64_t bits = splitmix64(key + j * 0x9e3779b97f4a7c15ull);
    keep[2 * j] = kept(bits & 0xffffffffu);
    keep[2 * j + 1] = kept(bits >> 32);
  }
  if (n % 2) keep[n - 1] = kept(splitmix64(key + (n / 2) * 0x9e3779b97f4a7c15ull) & 0xffffffffu);
}

// out[i] = in[i] * (keep[i] * scale): scaled where kept, else 0 (out may be in).
// A multiply, not a branch, so that it vectorizes (8x faster than `keep ? x * scale
// : 0`); like PyTorch's x * mask * scale, a dropped inf or NaN gives NaN, not 0.
template <class T>
__attribute__((target_clones("avx2", "default")))
void apply_keep(const T* in, const std::uint8_t* keep, std::size_t n, T scale, T* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = in[i] * (static_cast<T>(keep[i]) * scale);
}

template <class T>
Tensor dropout_(const Tensor& x, double p, Generator& gen) {
  // One draw of gen per call: the same seed gives the same masks.
  std::vector<std::uint8_t> keep(x.numel());  // a byte per value, not a float: the mask is kept for backward
  fill_keep(keep.data(), keep.size(), gen.engine()(), p);
  const T scale = p < 1.0 ? static_cast<T>(1.0 / (1.0 - p)) : T(0);  // survivors scaled by 1 / (1 - p)
  xt::xarray<T> y = xt::xarray<T>::from_shape(x.shape());
  apply_keep(x.data<T>().data(), keep.data(), keep.size(), scale, y.data());
  return record<T>("dropout", std::move(y), {x}, [keep = std::move(keep), scale](Node<T>& out) {
    // d dropout(x)/dx = scale where kept, else 0: the same values are dropped and scaled in the gradient
    xt::xarray<T> g = out.take_grad();
    apply_keep(g.data(), keep.data(), keep.size(), scale, g.data());  // in place
    out.add_to_input_grad(0, std::move(g));
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
