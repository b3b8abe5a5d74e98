// Lab 13's worked solution (the library's own, on raw arrays: core/backend/flash_attention.cpp;
// composed from core ops: nn/attention/flash_attention.cpp).
#pragma once

#include "labs/grader/lab13_online_softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lab {
namespace solutions {
namespace online_softmax {

using attn::Tensor;
using lab::online_softmax::Gradients;
using lab::online_softmax::Output;
using lab::online_softmax::Partial;

inline Partial merge(const Partial& a, const Partial& b) {
  Tensor m = attn::max(attn::stack({a.m, b.m}, 0), 0);  // the new max of each row
  // Each side was summed against its own max: bring both to the new one (a factor <= 1, never an overflow).
  Tensor ca = attn::exp(a.m - m), cb = attn::exp(b.m - m);
  Tensor l = ca * a.l + cb * b.l;
  Tensor u = attn::unsqueeze(ca, 1) * a.u + attn::unsqueeze(cb, 1) * b.u;  // [Tq, 1] * [Tq, Dv]
  return {m, l, u};
}

// The partial result of one block of keys: its scores s [Tq, Bk] and values vj [Bk, Dv].
inline Partial block_partial(const Tensor& s, const Tensor& vj) {
  Tensor m = attn::max(s, 1);
  Tensor p = attn::exp(s - attn::unsqueeze(m, 1));  // <= 1 whatever the scores' size
  return {m, attn::sum(p, {1}), attn::matmul(p, vj)};
}

inline Output forward(const Tensor& q, const Tensor& k, const Tensor& v, std::size_t block) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  const std::size_t Tk = k.size(0);
  Partial acc;
  for (std::size_t j0 = 0; j0 < Tk; j0 += block) {
    std::size_t n = std::min(block, Tk - j0);
    Tensor s = attn::matmul(q, attn::transpose(attn::narrow(k, 0, j0, n), 0, 1)) * scale;  // [Tq, n]: one block
    Partial p = block_partial(s, attn::narrow(v, 0, j0, n));
    acc = j0 == 0 ? p : merge(acc, p);
  }
  return {acc.u / attn::unsqueeze(acc.l, 1), acc.m + attn::log(acc.l)};
}

inline Gradients backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                          const Tensor& dout, std::size_t block) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  const std::size_t Tk = k.size(0);
  // The softmax's backward needs each row's sum_j p_j dp_j, which is dout . out: one number per row.
  Tensor delta = attn::unsqueeze(attn::sum(dout * out, {1}), 1);  // [Tq, 1]
  Tensor lse1 = attn::unsqueeze(lse, 1);
  Tensor dq = attn::zeros_like(q);
  std::vector<Tensor> dk, dv;
  for (std::size_t j0 = 0; j0 < Tk; j0 += block) {
    std::size_t n = std::min(block, Tk - j0);
    Tensor kj = attn::narrow(k, 0, j0, n), vj = attn::narrow(v, 0, j0, n);
    Tensor p = attn::exp(attn::matmul(q, attn::transpose(kj, 0, 1)) * scale - lse1);  // the block's weights, again
    dv.push_back(attn::matmul(attn::transpose(p, 0, 1), dout));                      // [n, Dv]
    Tensor dp = attn::matmul(dout, attn::transpose(vj, 0, 1));                       // [Tq, n]
    Tensor ds = p * (dp - delta);  // the gradient of the scaled scores
    dq = dq + attn::matmul(ds, kj) * scale;
    dk.push_back(attn::matmul(attn::transpose(ds, 0, 1), q) * scale);
  }
  return {dq, attn::concat(dk, 0), attn::concat(dv, 0)};
}

inline lab::online_softmax::Flash solution() { return {merge, forward, backward}; }

}  // namespace online_softmax
}  // namespace solutions
}  // namespace lab
