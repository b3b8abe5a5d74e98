// Lab 0: the engine. Write the backward rules of mul, div, exp, tanh and matmul,
// and the sum that un-broadcasts a gradient. What to write: labs/00_engine/README.md.
// Check it: tools/lab.sh 0 (your copy is labs/work/00_engine.cpp).
#include "labs/grader/lab00_engine.hpp"

using attn::Shape;
using attn::Tensor;

// ---- your code ----
// g has the broadcast shape of an output; return it summed down to `shape`.
// Tools: attn::sum(t, {axes}, /*keepdim=*/true), attn::reshape(t, {dims}).
Tensor unbroadcast(const Tensor& g, const Shape& shape) {
  lab::not_implemented("unbroadcast");
}

// y = a * b: return {dL/da, dL/db}, each in its input's shape, given g = dL/dy.
std::pair<Tensor, Tensor> mul_backward(const Tensor& a, const Tensor& b, const Tensor& g) {
  lab::not_implemented("mul_backward");
}

// y = a / b: return {dL/da, dL/db}.
std::pair<Tensor, Tensor> div_backward(const Tensor& a, const Tensor& b, const Tensor& g) {
  lab::not_implemented("div_backward");
}

// y = exp(x): return dL/dx (y is the output, already computed).
Tensor exp_backward(const Tensor& x, const Tensor& y, const Tensor& g) {
  lab::not_implemented("exp_backward");
}

// y = tanh(x): return dL/dx.
Tensor tanh_backward(const Tensor& x, const Tensor& y, const Tensor& g) {
  lab::not_implemented("tanh_backward");
}

// Y = A B with A [n, k], B [k, m], G [n, m]: return {dL/dA [n, k], dL/dB [k, m]}.
// Tools: attn::matmul, attn::transpose(t, 0, 1).
std::pair<Tensor, Tensor> matmul_backward(const Tensor& a, const Tensor& b, const Tensor& g) {
  lab::not_implemented("matmul_backward");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::engine::Engine mine{unbroadcast, mul_backward, div_backward, exp_backward, tanh_backward, matmul_backward};
  return lab::engine::grade(mine).exit_code();
}
#endif
