// Lab 23: conv2d by im2col, its forward and backward, and max_pool2d's backward.
// What to write: labs/23_conv2d/README.md. Check it: tools/lab.sh 23 (your copy is labs/work/23_conv2d.cpp).
#include "labs/grader/lab23_conv2d.hpp"

using attn::Shape;
using attn::Size2;
using attn::Tensor;
using lab::conv2d::Grads;

// ---- your code ----
// Per spatial dim, for kernel k, stride s, padding p:  out = (in + 2p - k) / s + 1.
// Read a tensor's values with x.data<double>() (an xt::xarray<double>, x(n, c, h, w)); build a result as
// xt::xarray<double> a = xt::zeros<double>({rows, columns}); and return Tensor(a).

// x [N, C, H, W] -> cols [C kH kW, N outH outW]:
//   cols[(c kH + u) kW + v, (n outH + i) outW + j] = x[n, c, i sH + u - pH, j sW + v - pW], 0 outside x.
Tensor im2col(const Tensor& x, Size2 kernel, Size2 stride, Size2 padding) {
  lab::not_implemented("im2col");
}

// dcols [C kH kW, N outH outW] -> dx [N, C, H, W] (x_shape): im2col backwards, every entry ADDED onto the
// pixel im2col read it from; the entries read from the padding are dropped.
Tensor col2im(const Tensor& dcols, const Shape& x_shape, Size2 kernel, Size2 stride, Size2 padding) {
  lab::not_implemented("col2im");
}

// x [N, C, H, W], weight [O, C, kH, kW], bias [O] -> y [N, O, outH, outW]:
//   Y = W_mat cols + b   [O, C kH kW] x [C kH kW, N outH outW] -> [O, N outH outW], b[o] on row o
//   then [O, N, outH, outW] -> [N, O, outH, outW].
// Tools: attn::matmul, attn::reshape(t, {O, -1}), attn::transpose(t, 0, 1), + (broadcasts [O, 1]).
Tensor conv2d_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2 stride, Size2 padding) {
  lab::not_implemented("conv2d_forward");
}

// g = dL/dy [N, O, outH, outW] -> {dx [N, C, H, W], dW [O, C, kH, kW], db [O]}:
//   G = g as [O, N outH outW];  dW = G cols^T;  db[o] = sum of G's row o;  dcols = W_mat^T G, dx = col2im(dcols).
// Tools: attn::sum(t, {axes}).
Grads conv2d_backward(const Tensor& x, const Tensor& weight, const Tensor& g, Size2 stride, Size2 padding) {
  lab::not_implemented("conv2d_backward");
}

// y = max_pool2d(x) [N, C, outH, outW], g = dL/dy -> dL/dx [N, C, H, W]: window (i, j) covers rows
// i sH - pH .. i sH - pH + kH - 1 and columns j sW - pW .. j sW - pW + kW - 1 of x (outside x: padding, -inf);
// its gradient g[n, c, i, j] goes whole to the FIRST pixel (row-major) holding the window's maximum, added there.
Tensor max_pool2d_backward(const Tensor& x, const Tensor& y, const Tensor& g, Size2 kernel, Size2 stride,
                           Size2 padding) {
  lab::not_implemented("max_pool2d_backward");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::conv2d::Conv2d mine{im2col, col2im, conv2d_forward, conv2d_backward, max_pool2d_backward};
  return lab::conv2d::grade(mine).exit_code();
}
#endif
