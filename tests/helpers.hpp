// Small helpers shared by the tests.
#pragma once

#include "attn.hpp"
#include "core/gradcheck_doctest.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace test {

// The inputs followed by every parameter of m: gradcheck perturbs them all.
inline std::vector<attn::Tensor> with_parameters(const attn::nn::Module& m, std::vector<attn::Tensor> inputs) {
  for (const attn::Tensor& p : m.parameters()) inputs.push_back(p);
  return inputs;
}

// m's parameter names, in registration order ("weight", "score.W_1", ...).
inline std::vector<std::string> parameter_names(const attn::nn::Module& m) {
  std::vector<std::string> out;
  for (const auto& entry : m.named_parameters()) out.push_back(entry.first);
  return out;
}

// A float64 tensor of normal values, reproducible from `seed`.
inline attn::Tensor randn(const attn::Shape& shape, std::uint64_t seed, bool requires_grad = true) {
  attn::Generator gen(seed);
  attn::Tensor t = attn::randn(shape, attn::Dtype::Float64, gen);
  t.requires_grad_(requires_grad);
  return t;
}

// Values in [low, high): for ops defined only on part of the line (log, sqrt).
inline attn::Tensor uniform(const attn::Shape& shape, double low, double high, std::uint64_t seed,
                            bool requires_grad = true) {
  attn::Generator gen(seed);
  attn::Tensor t = attn::uniform(shape, low, high, attn::Dtype::Float64, gen);
  t.requires_grad_(requires_grad);
  return t;
}

// True if every element of a and b is within tol.
inline bool allclose(const attn::Tensor& a, const attn::Tensor& b, double tol = 1e-12) {
  if (a.shape() != b.shape()) return false;
  const auto x = a.to_array(), y = b.to_array();
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!(std::abs(x.flat(i) - y.flat(i)) <= tol)) return false;
  return true;
}

}  // namespace test

// Checks that `expr` throws an exception of `type` whose message contains `text`.
#define CHECK_THROWS_WITH_SUBSTR(expr, type, text)                                 \
  do {                                                                             \
    bool attn_thrown_ = false;                                                     \
    try {                                                                          \
      (void)(expr);                                                                \
    } catch (const type& e) {                                                      \
      attn_thrown_ = true;                                                         \
      INFO("message: " << std::string(e.what()));                                               \
      CHECK(std::string(e.what()).find(text) != std::string::npos);                \
    }                                                                              \
    CHECK_MESSAGE(attn_thrown_, #expr " did not throw " #type);                    \
  } while (false)
