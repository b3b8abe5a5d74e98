// Lab 13: the online softmax, tiled attention that keeps the log-sum-exp, and its backward.
// What to write: labs/13_online_softmax/README.md. Check it: tools/lab.sh 13 (your copy is labs/work/13_online_softmax.cpp).
#include "labs/grader/lab13_online_softmax.hpp"

using attn::Tensor;
using lab::online_softmax::Gradients;
using lab::online_softmax::Output;
using lab::online_softmax::Partial;

// ---- your code ----
// A Partial is {m [Tq], l [Tq], u [Tq, Dv]}: a row's max score, sum_j exp(s_j - m), sum_j exp(s_j - m) v_j.
// Two partials over disjoint keys -> the partial over both. Tools: attn::max(attn::stack({a.m, b.m}, 0), 0)
// is the elementwise max; attn::exp; attn::unsqueeze(x, 1) turns [Tq] into [Tq, 1] to scale the rows of u.
Partial merge(const Partial& a, const Partial& b) {
  lab::not_implemented("merge");
}

// q [Tq, D], k [Tk, D], v [Tk, Dv] -> {out [Tq, Dv], lse [Tq]}, `block` keys at a time (the last block may be
// shorter). Tools: attn::narrow(k, 0, start, n) is keys start .. start + n - 1; attn::transpose(t, 0, 1);
// attn::matmul; attn::max(s, 1) and attn::sum(p, {1}) over each row; attn::log.
Output forward(const Tensor& q, const Tensor& k, const Tensor& v, std::size_t block) {
  lab::not_implemented("forward");
}

// The gradients of sum(out * dout), dout [Tq, Dv], from out and lse alone, `block` keys at a time.
// Tools: as above, and attn::zeros_like(q), attn::concat(blocks, 0).
Gradients backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                   const Tensor& dout, std::size_t block) {
  lab::not_implemented("backward");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::online_softmax::Flash mine{merge, forward, backward};
  return lab::online_softmax::grade(mine).exit_code();
}
#endif
