// Wrong solutions of lab 13; labs/tests/test_lab13.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/13_online_softmax.hpp"

namespace lab {
namespace planted {
namespace online_softmax {

using attn::Tensor;
using lab::online_softmax::Flash;
using lab::online_softmax::Gradients;
using lab::online_softmax::Output;
using lab::online_softmax::Partial;
namespace good = lab::solutions::online_softmax;

inline double scale_of(const Tensor& q) { return 1.0 / std::sqrt(static_cast<double>(q.size(-1))); }

// The forward of the worked solution with another merge (the learner's forward calls their merge).
inline Output forward_with(const std::function<Partial(const Partial&, const Partial&)>& merge, const Tensor& q,
                           const Tensor& k, const Tensor& v, std::size_t block) {
  Partial acc;
  for (std::size_t j0 = 0; j0 < k.size(0); j0 += block) {
    std::size_t n = std::min(block, k.size(0) - j0);
    Tensor s = attn::matmul(q, attn::transpose(attn::narrow(k, 0, j0, n), 0, 1)) * scale_of(q);
    Partial p = good::block_partial(s, attn::narrow(v, 0, j0, n));
    acc = j0 == 0 ? p : merge(acc, p);
  }
  return {acc.u / attn::unsqueeze(acc.l, 1), acc.m + attn::log(acc.l)};
}

// The worked solution's backward, its weights recomputed as exp(q k^T * p_scale - lse).
inline Gradients backward_with_p_scale(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o,
                                       const Tensor& lse, const Tensor& dout, std::size_t block, double p_scale) {
  const double sc = scale_of(q);
  Tensor delta = attn::unsqueeze(attn::sum(dout * o, {1}), 1);
  Tensor dq = attn::zeros_like(q);
  std::vector<Tensor> dk, dv;
  for (std::size_t j0 = 0; j0 < k.size(0); j0 += block) {
    std::size_t n = std::min(block, k.size(0) - j0);
    Tensor kj = attn::narrow(k, 0, j0, n), vj = attn::narrow(v, 0, j0, n);
    Tensor p = attn::exp(attn::matmul(q, attn::transpose(kj, 0, 1)) * p_scale - attn::unsqueeze(lse, 1));
    dv.push_back(attn::matmul(attn::transpose(p, 0, 1), dout));
    Tensor ds = p * (attn::matmul(dout, attn::transpose(vj, 0, 1)) - delta);
    dq = dq + attn::matmul(ds, kj) * sc;
    dk.push_back(attn::matmul(attn::transpose(ds, 0, 1), q) * sc);
  }
  return {dq, attn::concat(dk, 0), attn::concat(dv, 0)};
}

inline std::vector<Planted<Flash>> all() {
  std::vector<Planted<Flash>> out;
  const Flash base = good::solution();

  auto s = base;
  s.merge = [](const Partial& a, const Partial& b) -> Partial {
    Tensor m = attn::max(attn::stack({a.m, b.m}, 0), 0);
    Tensor cb = attn::exp(b.m - m);
    return {m, a.l + cb * b.l, a.u + attn::unsqueeze(cb, 1) * b.u};  // a was summed against m_a, not m
  };
  s.forward = [merge = s.merge](const Tensor& q, const Tensor& k, const Tensor& v, std::size_t block) {
    return forward_with(merge, q, k, v, block);
  };
  out.push_back({"the merge forgets to rescale the older sum", s, "multiply a's l and u by exp(m_a - m)", true});

  s = base;
  s.merge = [](const Partial& a, const Partial& b) -> Partial {
    Tensor m = attn::max(attn::stack({a.m, b.m}, 0), 0);
    Tensor ca = attn::exp(a.m - m), cb = attn::exp(b.m - m);
    return {m, a.l + b.l, attn::unsqueeze(ca, 1) * a.u + attn::unsqueeze(cb, 1) * b.u};  // l not rescaled
  };
  s.forward = [merge = s.merge](const Tensor& q, const Tensor& k, const Tensor& v, std::size_t block) {
    return forward_with(merge, q, k, v, block);
  };
  out.push_back({"the merge rescales u but not l", s, "u rescaled but l not", true});

  s = base;
  s.merge = [](const Partial& a, const Partial& b) -> Partial {
    return {b.m, attn::exp(a.m - b.m) * a.l + b.l, attn::unsqueeze(attn::exp(a.m - b.m), 1) * a.u + b.u};
  };  // the newer max taken as the max: exp(m_a - m_b) overflows when the older one was larger
  out.push_back({"the merge keeps the newer max, not the larger", s, "the newer max kept as m", true});

  s = base;
  s.forward = [](const Tensor& q, const Tensor& k, const Tensor& v, std::size_t block) -> Output {
    Tensor l, u;  // no running max: exp of the raw scores, summed
    for (std::size_t j0 = 0; j0 < k.size(0); j0 += block) {
      std::size_t n = std::min(block, k.size(0) - j0);
      Tensor p = attn::exp(attn::matmul(q, attn::transpose(attn::narrow(k, 0, j0, n), 0, 1)) * scale_of(q));
      Tensor pl = attn::sum(p, {1}), pu = attn::matmul(p, attn::narrow(v, 0, j0, n));
      l = j0 == 0 ? pl : l + pl;
      u = j0 == 0 ? pu : u + pu;
    }
    return {u / attn::unsqueeze(l, 1), attn::log(l)};
  };
  out.push_back({"a tiled forward without the running max", s, "subtract each block's row max before exp"});

  s = base;
  s.forward = [](const Tensor& q, const Tensor& k, const Tensor& v, std::size_t block) -> Output {
    // the walk starts from m = 0 rather than the empty partial's m = -inf: right until every score
    // of a row lies below about -708, where exp(s - 0) underflows to 0, l = 0 and out = 0/0
    Partial acc{attn::zeros({q.size(0)}), attn::zeros({q.size(0)}), attn::zeros({q.size(0), v.size(1)})};
    for (std::size_t j0 = 0; j0 < k.size(0); j0 += block) {
      std::size_t n = std::min(block, k.size(0) - j0);
      Tensor s = attn::matmul(q, attn::transpose(attn::narrow(k, 0, j0, n), 0, 1)) * scale_of(q);
      acc = good::merge(acc, good::block_partial(s, attn::narrow(v, 0, j0, n)));
    }
    return {acc.u / attn::unsqueeze(acc.l, 1), acc.m + attn::log(acc.l)};
  };
  out.push_back({"a tiled forward whose running partial starts at m = 0", s, "m = -inf, l = 0, u = 0, not m = 0"});

  s = base;
  s.forward = [](const Tensor& q, const Tensor& k, const Tensor& v, std::size_t) -> Output {
    Tensor scores = attn::matmul(q, attn::transpose(k, 0, 1)) * scale_of(q);  // [Tq, Tk] whole
    return {attn::matmul(attn::softmax(scores, 1), v), attn::logsumexp(scores, 1)};
  };
  out.push_back({"a forward that computes the whole [Tq, Tk] scores", s, "holds an array of size Tq x Tk"});

  s = base;
  s.forward = [](const Tensor& q, const Tensor& k, const Tensor& v, std::size_t block) -> Output {
    Output o = good::forward(q, k, v, block);
    Tensor s_all = attn::matmul(q, attn::transpose(k, 0, 1)) * scale_of(q);
    return {o.out, attn::max(s_all, 1)};  // lse = m: the log l left out
  };
  out.push_back({"lse without log l", s, "the log l left out"});

  s = base;
  s.backward = [](const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, const Tensor& lse,
                  const Tensor& dout, std::size_t block) -> Gradients {
    return backward_with_p_scale(q, k, v, o, lse, dout, block, 1.0);  // the weights from q k^T: no 1/sqrt(D)
  };
  out.push_back({"the backward recomputes the weights with the wrong scale", s, "recomputed from unscaled scores",
                 true});

  s = base;
  s.backward = [](const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, const Tensor& lse,
                  const Tensor& dout, std::size_t block) -> Gradients {
    Gradients g = good::backward(q, k, v, o, lse, dout, block);
    double d = std::sqrt(static_cast<double>(q.size(-1)));
    return {g.dq * d, g.dk * d, g.dv};  // dq and dk without the 1/sqrt(D) of s = q k^T / sqrt(D)
  };
  out.push_back({"dq and dk without the scale", s, "dq and dk without the scale", true});

  s = base;
  s.backward = [](const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, const Tensor& lse,
                  const Tensor& dout, std::size_t block) -> Gradients {
    return good::backward(q, k, v, attn::zeros_like(o), lse, dout, block);  // delta = 0
  };
  out.push_back({"the backward without delta", s, "delta left out", true});

  s = base;
  s.backward = [](const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, const Tensor& lse,
                  const Tensor& dout, std::size_t) -> Gradients {
    return good::backward(q, k, v, o, lse, dout, k.size(0));  // one block of every key: [Tq, Tk] at once
  };
  out.push_back({"a backward that ignores the block size and holds [Tq, Tk]", s, "holds an array of size Tq x Tk"});

  s = base;
  s.backward = [](const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, const Tensor& lse,
                  const Tensor& dout, std::size_t block) -> Gradients {
    // exp(s) / exp(lse): the same weights, until exp(s) overflows
    const double sc = scale_of(q);
    Tensor delta = attn::unsqueeze(attn::sum(dout * o, {1}), 1);
    Tensor dq = attn::zeros_like(q);
    std::vector<Tensor> dk, dv;
    for (std::size_t j0 = 0; j0 < k.size(0); j0 += block) {
      std::size_t n = std::min(block, k.size(0) - j0);
      Tensor kj = attn::narrow(k, 0, j0, n), vj = attn::narrow(v, 0, j0, n);
      Tensor p = attn::exp(attn::matmul(q, attn::transpose(kj, 0, 1)) * sc) / attn::unsqueeze(attn::exp(lse), 1);
      dv.push_back(attn::matmul(attn::transpose(p, 0, 1), dout));
      Tensor ds = p * (attn::matmul(dout, attn::transpose(vj, 0, 1)) - delta);
      dq = dq + attn::matmul(ds, kj) * sc;
      dk.push_back(attn::matmul(attn::transpose(ds, 0, 1), q) * sc);
    }
    return {dq, attn::concat(dk, 0), attn::concat(dv, 0)};
  };
  out.push_back({"the backward's weights as exp(s) / exp(lse)", s, "exp(s) / exp(lse) overflows"});
  return out;
}

}  // namespace online_softmax
}  // namespace planted
}  // namespace lab
