// Lab 1: softmax and log-softmax over the last axis, forward and backward.
// What to write: labs/01_softmax/README.md. Check it: tools/lab.sh 1 (your copy is labs/work/01_softmax.cpp).
#include "labs/grader/lab01_softmax.hpp"

using attn::Tensor;

// ---- your code ----
// x [..., n] -> softmax over the last axis, stable for |x| of 1000 and more.
// Tools: attn::max(x, -1, /*keepdim=*/true), attn::exp, attn::sum(t, {-1}, /*keepdim=*/true), attn::log.
Tensor softmax(const Tensor& x) {
  lab::not_implemented("softmax");
}

// y = softmax(x), g = dL/dy: return dL/dx.
Tensor softmax_backward(const Tensor& y, const Tensor& g) {
  lab::not_implemented("softmax_backward");
}

// x [..., n] -> log(softmax(x)) over the last axis, without computing log(0) for tiny probabilities.
Tensor log_softmax(const Tensor& x) {
  lab::not_implemented("log_softmax");
}

// y = log_softmax(x), g = dL/dy: return dL/dx.
Tensor log_softmax_backward(const Tensor& y, const Tensor& g) {
  lab::not_implemented("log_softmax_backward");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::softmax::Softmax mine{softmax, softmax_backward, log_softmax, log_softmax_backward};
  return lab::softmax::grade(mine).exit_code();
}
#endif
