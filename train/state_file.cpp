#include "state_file.hpp"

#include "trainer.hpp"

#include <cmath>

namespace attn::models {

Tensor count_tensor(double value) { return Tensor(xt::xarray<double>({value})); }

Tensor words_tensor(const std::vector<std::uint64_t>& words) {
  xt::xarray<double> a = xt::zeros<double>({2 * words.size()});
  for (std::size_t i = 0; i < words.size(); ++i) {
    a(2 * i) = static_cast<double>(words[i] >> 32);
    a(2 * i + 1) = static_cast<double>(words[i] & 0xffffffffu);
  }
  return Tensor(a);
}

void StateEntries::require(const std::string& key) const {
  if (!has(key)) throw IOError(file + ": not a trainer checkpoint (no '" + key + "')");
}

void StateEntries::fail(const std::string& key, const std::string& expected) const {
  throw IOError(file + ": '" + key + "' must be " + expected + " (a damaged or foreign trainer checkpoint)");
}

double StateEntries::scalar(const std::string& key) const {
  require(key);
  const Tensor& t = state.at(key);
  if (t.numel() != 1) fail(key, "a single number, got " + std::to_string(t.numel()) + " values");
  const double v = t.item();
  if (!std::isfinite(v)) fail(key, "finite, got " + std::to_string(v));
  return v;
}

long long StateEntries::whole(const std::string& key, long long min) const {
  const double v = scalar(key);
  if (v != std::floor(v) || v < double(min) || v > 9007199254740992.0)
    fail(key, "a whole number >= " + std::to_string(min) + ", got " + std::to_string(v));
  return static_cast<long long>(v);
}

std::vector<std::uint64_t> StateEntries::words(const std::string& key) const {
  require(key);
  const xt::xarray<double> a = state.at(key).to_array();
  if (a.size() == 0 || a.size() % 2) fail(key, "pairs of 32-bit halves");
  for (double v : a)
    if (!(v >= 0 && v < 4294967296.0 && v == std::floor(v))) fail(key, "pairs of 32-bit halves, got " + std::to_string(v));
  std::vector<std::uint64_t> w;
  for (std::size_t i = 0; i + 1 < a.size(); i += 2)
    w.push_back((static_cast<std::uint64_t>(a.flat(i)) << 32) | static_cast<std::uint64_t>(a.flat(i + 1)));
  Generator probe;
  try {
    set_generator_state(probe, w);
  } catch (const IOError&) {
    fail(key, "the state of a random generator");
  }
  return w;
}

}  // namespace attn::models
