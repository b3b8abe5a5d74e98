// Lab 13's grader: the online softmax, tiled attention that keeps the log-sum-exp, and its
// backward from the log-sum-exp alone (labs/13_online_softmax/README.md).
//
//   lab::online_softmax::grade(lab::online_softmax::Flash{merge, forward, backward});  // "lab 13: k of M checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace online_softmax {

// What a row's softmax-weighted sum needs of the keys seen so far (the chapter's m, l, u):
// m [Tq], the largest score; l [Tq], sum_j exp(s_j - m); u [Tq, Dv], sum_j exp(s_j - m) v_j.
// The attention over those keys is u / l.
struct Partial {
  Tensor m, l, u;
};

struct Output {
  Tensor out;  // [Tq, Dv], softmax(q k^T / sqrt(D)) v
  Tensor lse;  // [Tq], each row's log-sum-exp of the scaled scores, m + log l
};

struct Gradients {
  Tensor dq, dk, dv;  // of q [Tq, D], k [Tk, D], v [Tk, Dv]
};

struct Flash {
  // Two partial results of the same rows over disjoint sets of keys -> the partial result over both.
  std::function<Partial(const Partial& a, const Partial& b)> merge;
  // q [Tq, D], k [Tk, D], v [Tk, Dv] -> {out, lse}, walking the keys `block` at a time
  // (the last block may be shorter); nothing of size Tq x Tk is ever held.
  std::function<Output(const Tensor& q, const Tensor& k, const Tensor& v, std::size_t block)> forward;
  // The gradients of sum(out * dout) from q, k, v, the forward's out and lse, and dout [Tq, Dv],
  // recomputing each block's weights from lse, `block` keys at a time.
  std::function<Gradients(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                          const Tensor& dout, std::size_t block)>
      backward;
};

// Runs every check on the learner's functions, printing each to `os`.
Result grade(const Flash& f, std::ostream& os = std::cout);

}  // namespace online_softmax
}  // namespace lab
