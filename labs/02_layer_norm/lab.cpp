// Lab 2: layer normalization over the last axis, forward and backward.
// What to write: labs/02_layer_norm/README.md. Check it: tools/lab.sh 2 (your copy is labs/work/02_layer_norm.cpp).
#include "labs/grader/lab02_layer_norm.hpp"

using attn::Tensor;

// ---- your code ----
// x [..., D], gamma [D], beta [D] -> (x - mean) / sqrt(var + eps) * gamma + beta,
// mean and biased var over the last axis.
// Tools: attn::mean(t, {-1}, /*keepdim=*/true), attn::sqrt, attn::sum(t, {axes}).
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  lab::not_implemented("layer_norm");
}

// g = dL/dy -> {dL/dx [..., D], dL/dgamma [D], dL/dbeta [D]}.
std::tuple<Tensor, Tensor, Tensor> layer_norm_backward(const Tensor& x, const Tensor& gamma, const Tensor& g,
                                                       double eps) {
  lab::not_implemented("layer_norm_backward");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::layer_norm::LayerNorm mine{layer_norm, layer_norm_backward};
  return lab::layer_norm::grade(mine).exit_code();
}
#endif
