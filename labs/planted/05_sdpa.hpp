// Wrong solutions of lab 5; labs/tests/test_lab05.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/05_sdpa.hpp"


namespace lab {
namespace planted {
namespace sdpa {

using attn::Mask;
using attn::Tensor;
using Output = std::pair<Tensor, Tensor>;
namespace good = lab::solutions::sdpa;

inline std::vector<Planted<lab::sdpa::Attention>> all() {
  std::vector<Planted<lab::sdpa::Attention>> out;
  auto base = good::solution();

  auto s = base;
  s.causal_mask = [](std::size_t T) {
    Mask m = Mask::from_shape({T, T});
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = 0; j < T; ++j) m(i, j) = j >= i;  // off by one: blocks the diagonal too
    return m;
  };
  out.push_back({"the causal mask off by one (a query cannot see itself)", s, "a query sees itself"});

  s = base;
  s.attention = [](const Tensor& q, const Tensor& k, const Tensor& v, const Mask& mask) -> Output {
    Tensor scores = attn::matmul(q, attn::transpose(k, 1, 2)) / static_cast<double>(q.size(-1));
    Tensor w = attn::masked_fill(attn::softmax(attn::masked_fill(scores, mask, -1e30), -1), mask, 0.0);
    return {attn::matmul(w, v), w};
  };
  out.push_back({"the scores divided by D, not sqrt(D)", s, "divided by D: divide by sqrt(D)"});

  s = base;
  s.attention = [](const Tensor& q, const Tensor& k, const Tensor& v, const Mask& mask) -> Output {
    Tensor scores = attn::matmul(q, attn::transpose(k, 1, 2)) / std::sqrt(static_cast<double>(q.size(-1)));
    Tensor w = attn::masked_fill(attn::softmax(scores, -1), mask, 0.0);
    return {attn::matmul(w, v), w};
  };
  out.push_back({"the mask applied after the softmax", s, "mask the scores before it"});

  s = base;
  s.attention = [](const Tensor& q, const Tensor& k, const Tensor& v, const Mask& mask) -> Output {
    Tensor scores = attn::matmul(q, attn::transpose(k, 1, 2)) / std::sqrt(static_cast<double>(q.size(-1)));
    Tensor w = attn::softmax(attn::masked_fill(scores, mask, -1e30), -1);  // a row blocked entirely: uniform
    return {attn::matmul(w, v), w};
  };
  out.push_back({"a row with every key blocked left uniform, not 0", s, "set the blocked weights to 0 after the softmax"});

  s = base;
  s.attention = [](const Tensor& q, const Tensor& k, const Tensor& v, const Mask& mask) -> Output {
    Tensor scores = attn::matmul(q, attn::transpose(k, 1, 2)) / std::sqrt(static_cast<double>(q.size(-1)));
    Tensor w = attn::masked_fill(attn::softmax(attn::masked_fill(scores, mask, -1e30), 1), mask, 0.0);  // over Tq
    return {attn::matmul(w, v), w};
  };
  out.push_back({"the softmax over the queries, not the keys", s, "the softmax over Tk"});

  s = base;
  s.attention = [](const Tensor& q, const Tensor& k, const Tensor& v, const Mask& mask) -> Output {
    Tensor scores = attn::matmul(q, attn::transpose(k, 1, 2)) / std::sqrt(static_cast<double>(q.size(-1)));
    // -1e4: below every score of ordinary size, above a row of scores near -2e4
    Tensor w = attn::masked_fill(attn::softmax(attn::masked_fill(scores, mask, -1e4), -1), mask, 0.0);
    return {attn::matmul(w, v), w};
  };
  out.push_back({"blocked scores filled with -1e4, not -1e30", s, "the blocked scores outranked real scores", true});
  return out;
}

}  // namespace sdpa
}  // namespace planted
}  // namespace lab
