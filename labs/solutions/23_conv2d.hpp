// Lab 23's worked solution: conv2d by im2col (forward and backward) and max_pool2d's backward,
// the sums core/ops/conv2d.cpp and core/ops/pool2d.cpp compute, in this lab's layout
// (cols [C kH kW, N outH outW], a column per output pixel).
#pragma once

#include "labs/grader/lab23_conv2d.hpp"

namespace lab {
namespace solutions {
namespace conv2d {

using attn::Shape;
using attn::Size2;
using attn::Tensor;
using lab::conv2d::Grads;

// Per spatial dim: a window starts every s pixels of the padded input, and a last partial one is dropped.
inline std::size_t out_size(std::size_t in, std::size_t k, std::size_t s, std::size_t p) {
  return (in + 2 * p - k) / s + 1;
}

// x [N, C, H, W] -> cols [C kH kW, N outH outW]: column (n, i, j) is output pixel (n, i, j)'s window,
// row (c, u, v) its pixel x_pad[n, c, i sH + u, j sW + v] = x[n, c, i sH + u - pH, j sW + v - pW].
inline Tensor im2col(const Tensor& x, Size2 kernel, Size2 stride, Size2 padding) {
  const auto& X = x.data<double>();
  const std::size_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), kH = kernel[0], kW = kernel[1];
  const std::size_t outH = out_size(H, kH, stride[0], padding[0]), outW = out_size(W, kW, stride[1], padding[1]);
  xt::xarray<double> cols = xt::zeros<double>({C * kH * kW, N * outH * outW});  // padding stays 0
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t i = 0; i < outH; ++i)
      for (std::size_t j = 0; j < outW; ++j)
        for (std::size_t c = 0; c < C; ++c)
          for (std::size_t u = 0; u < kH; ++u)
            for (std::size_t v = 0; v < kW; ++v) {
              const long h = long(i * stride[0] + u) - long(padding[0]), w = long(j * stride[1] + v) - long(padding[1]);
              if (h >= 0 && h < long(H) && w >= 0 && w < long(W))
                cols((c * kH + u) * kW + v, (n * outH + i) * outW + j) = X(n, c, h, w);
            }
  return Tensor(cols);
}

// im2col's adjoint: every entry of dcols added onto the pixel it was read from; a pixel in several
// windows gets the sum (+=), and the entries read from the padding belong to no pixel of x.
inline Tensor col2im(const Tensor& dcols, const Shape& x_shape, Size2 kernel, Size2 stride, Size2 padding) {
  const auto& D = dcols.data<double>();
  const std::size_t N = x_shape[0], C = x_shape[1], H = x_shape[2], W = x_shape[3], kH = kernel[0], kW = kernel[1];
  const std::size_t outH = out_size(H, kH, stride[0], padding[0]), outW = out_size(W, kW, stride[1], padding[1]);
  xt::xarray<double> dx = xt::zeros<double>(x_shape);
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t i = 0; i < outH; ++i)
      for (std::size_t j = 0; j < outW; ++j)
        for (std::size_t c = 0; c < C; ++c)
          for (std::size_t u = 0; u < kH; ++u)
            for (std::size_t v = 0; v < kW; ++v) {
              const long h = long(i * stride[0] + u) - long(padding[0]), w = long(j * stride[1] + v) - long(padding[1]);
              if (h >= 0 && h < long(H) && w >= 0 && w < long(W))
                dx(n, c, h, w) += D((c * kH + u) * kW + v, (n * outH + i) * outW + j);
            }
  return Tensor(dx);
}

// y = W_mat cols + b, [O, C kH kW] x [C kH kW, N outH outW], then [O, N, outH, outW] -> [N, O, outH, outW].
inline Tensor conv2d_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2 stride, Size2 padding) {
  const long N = long(x.size(0)), O = long(weight.size(0));
  const Size2 kernel{weight.size(2), weight.size(3)};
  const long outH = long(out_size(x.size(2), kernel[0], stride[0], padding[0]));
  const long outW = long(out_size(x.size(3), kernel[1], stride[1], padding[1]));
  const Tensor cols = im2col(x, kernel, stride, padding);
  const Tensor Y = attn::matmul(attn::reshape(weight, {O, -1}), cols) + attn::reshape(bias, {O, 1});
  return attn::transpose(attn::reshape(Y, {O, N, outH, outW}), 0, 1);
}

// G = g as [O, N outH outW]; dW = G cols^T, db = G's row sums, dcols = W_mat^T G, dx = col2im(dcols).
inline Grads conv2d_backward(const Tensor& x, const Tensor& weight, const Tensor& g, Size2 stride, Size2 padding) {
  const long O = long(weight.size(0));
  const Size2 kernel{weight.size(2), weight.size(3)};
  const Tensor G = attn::reshape(attn::transpose(g, 0, 1), {O, -1});  // [O, N outH outW]
  const Tensor cols = im2col(x, kernel, stride, padding);              // recomputed from x
  const Tensor W = attn::reshape(weight, {O, -1});                      // [O, C kH kW]
  Grads d;
  d.weight = attn::reshape(attn::matmul(G, attn::transpose(cols, 0, 1)),
                           {O, long(weight.size(1)), long(kernel[0]), long(kernel[1])});
  d.bias = attn::sum(G, {1});  // every image, every position
  d.x = col2im(attn::matmul(attn::transpose(W, 0, 1), G), x.shape(), kernel, stride, padding);
  return d;
}

// Each window's gradient to its first maximum (row-major; padding is never read, as -inf would never win).
inline Tensor max_pool2d_backward(const Tensor& x, const Tensor& y, const Tensor& g, Size2 kernel, Size2 stride,
                                  Size2 padding) {
  const auto& X = x.data<double>();
  const auto& G = g.data<double>();
  const std::size_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const std::size_t outH = y.size(2), outW = y.size(3);
  xt::xarray<double> dx = xt::zeros<double>(x.shape());
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t c = 0; c < C; ++c)
      for (std::size_t i = 0; i < outH; ++i)
        for (std::size_t j = 0; j < outW; ++j) {
          long bh = -1, bw = -1;
          for (std::size_t u = 0; u < kernel[0]; ++u)
            for (std::size_t v = 0; v < kernel[1]; ++v) {
              const long h = long(i * stride[0] + u) - long(padding[0]), w = long(j * stride[1] + v) - long(padding[1]);
              if (h < 0 || h >= long(H) || w < 0 || w >= long(W)) continue;
              if (bh < 0 || X(n, c, h, w) > X(n, c, bh, bw)) bh = h, bw = w;  // strictly greater: the first wins
            }
          dx(n, c, bh, bw) += G(n, c, i, j);  // += : a pixel may be the maximum of several windows
        }
  return Tensor(dx);
}

inline lab::conv2d::Conv2d solution() { return {im2col, col2im, conv2d_forward, conv2d_backward, max_pool2d_backward}; }

}  // namespace conv2d
}  // namespace solutions
}  // namespace lab
