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

  // Mask::from_shape leaves the elements unset; the memory here holds a previous mask's trues.
  s = base;
  s.causal_mask = [](std::size_t T) {
    Mask m = Mask::from_shape({T, T});
    m.fill(true);  // what the memory held before (unset, as far as the code is concerned)
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = 0; j < T; ++j)
        if (j > i) m(i, j) = true;  // only the true elements set
    return m;
  };
  out.push_back({"the causal mask's false elements left unset", s, "Mask::from_shape leaves them unset", true});

  s = base;
  s.padding_mask = [](const std::vector<std::size_t>& lengths, std::size_t T) {
    Mask m = Mask::from_shape({lengths.size(), T});
    m.fill(true);  // what the memory held before (unset, as far as the code is concerned)
    for (std::size_t b = 0; b < lengths.size(); ++b)
      for (std::size_t j = 0; j < T; ++j)
        if (j >= lengths[b]) m(b, j) = true;  // only the true elements set
    return m;
  };
  out.push_back({"the padding mask's false elements left unset", s, "Mask::from_shape leaves them unset", true});

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
    // -1e4: below every score of ordinary size, above a row of scores near -1e12
    Tensor w = attn::masked_fill(attn::softmax(attn::masked_fill(scores, mask, -1e4), -1), mask, 0.0);
    return {attn::matmul(w, v), w};
  };
  out.push_back({"blocked scores filled with -1e4, not -1e30", s, "the blocked scores outranked real scores", true});

  for (double fill : {-1e5, -1e9}) {  // -1e9: the Annotated Transformer's, still above -1e12
    s = base;
    s.attention = [fill](const Tensor& q, const Tensor& k, const Tensor& v, const Mask& mask) -> Output {
      Tensor scores = attn::matmul(q, attn::transpose(k, 1, 2)) / std::sqrt(static_cast<double>(q.size(-1)));
      Tensor w = attn::masked_fill(attn::softmax(attn::masked_fill(scores, mask, fill), -1), mask, 0.0);
      return {attn::matmul(w, v), w};
    };
    out.push_back({"blocked scores filled with " + num_str(fill) + ", not -1e30", s, "any finite fill above them", true});
  }

  s = base;
  s.attention = [](const Tensor& q, const Tensor& k, const Tensor& v, const Mask& mask) -> Output {
    Tensor scores = attn::matmul(q, attn::transpose(k, 1, 2)) / std::sqrt(static_cast<double>(q.size(-1)));
    // right while no real weight underflows; 1e-300 keeps a row blocked entirely at 0
    Tensor w0 = attn::masked_fill(attn::softmax(scores, -1), mask, 0.0);
    Tensor w = w0 / (attn::sum(w0, {-1}, true) + 1e-300);
    return {attn::matmul(w, v), w};
  };
  out.push_back({"softmax, blocked weights zeroed, renormalised", s, "block the scores before the softmax", true});
  return out;
}

}  // namespace sdpa
}  // namespace planted
}  // namespace lab
