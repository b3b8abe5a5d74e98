// 2-D convolution, as torch.nn.functional.conv2d (dilation 1, one group).
//
//   y[n, o, i, j] = b[o] + sum_{c, u, v} w[o, c, u, v] * x_pad[n, c, i*sH + u, j*sW + v]
//
// im2col turns it into one matrix product: row (n, i, j) of `cols` holds the window that
// output pixel (n, i, j) reads, flattened as (c, u, v), the same order as a row of the weight
// reshaped [O, C*kH*kW]. Then y = cols W^T + b, and the backward is the matmul's (core/ops/matmul.cpp)
// plus col2im, which adds each window's gradient back onto the pixels it was read from.
//
// With fused ops on, conv2d runs core/backend/conv2d.cpp instead: the same sums through direct
// gemm calls, image by image, without the [N*outH*outW, C*kH*kW] matrix of every image at once.
#include "../conv2d.hpp"

#include "../backend/conv2d.hpp"
#include "../errors.hpp"
#include "../kernels.hpp"
#include "../record.hpp"

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xmanipulation.hpp>

namespace attn {

Conv2dGeometry conv2d_geometry(const char* op, const Shape& x, Size2 kernel, Size2 stride, Size2 padding) {
  const auto pair = [](Size2 s) { return "(" + std::to_string(s[0]) + ", " + std::to_string(s[1]) + ")"; };
  if (x.size() != 4) throw ShapeError(std::string(op) + ": expected input [N, C, H, W], got " + shape_str(x));
  // As PyTorch: an empty batch is an empty output, but an image with no channel, row or column has
  // no window to read (with padding alone, conv2d would give its bias)
  if (x[1] == 0 || x[2] == 0 || x[3] == 0)
    throw ShapeError(std::string(op) +
                     ": expected an input with at least one channel, row and column (only N may be 0), got " +
                     shape_str(x));
  if (kernel[0] == 0 || kernel[1] == 0)
    throw ShapeError(std::string(op) + ": kernel must be at least 1x1, got " + pair(kernel) + " for input " + shape_str(x));
  if (stride[0] == 0 || stride[1] == 0)
    throw ShapeError(std::string(op) + ": stride must be at least 1, got " + pair(stride) + " for input " + shape_str(x));
  const std::size_t padded_h = x[2] + 2 * padding[0], padded_w = x[3] + 2 * padding[1];
  if (padded_h < kernel[0] || padded_w < kernel[1])
    throw ShapeError(std::string(op) + ": kernel " + pair(kernel) + " is larger than the padded input (" +
                     std::to_string(padded_h) + ", " + std::to_string(padded_w) + ") of input " + shape_str(x) +
                     " with padding " + pair(padding));
  Conv2dGeometry g{x[0], x[1], x[2], x[3], kernel[0], kernel[1], stride[0], stride[1], padding[0], padding[1], 0, 0};
  g.outH = (padded_h - g.kH) / g.sH + 1;
  g.outW = (padded_w - g.kW) / g.sW + 1;
  return g;
}

namespace {

// im2col: x [N, C, H, W] -> cols [N*outH*outW, C*kH*kW]; cols[(n, i, j), (c, u, v)] = x_pad[n, c, i*sH + u, j*sW + v]
// (0 where that pixel is padding).
template <class T>
xt::xarray<T> im2col(const xt::xarray<T>& x, const Conv2dGeometry& g) {
  const std::size_t row = g.C * g.kH * g.kW;
  xt::xarray<T> cols = xt::zeros<T>({g.N * g.outH * g.outW, row});  // [N*outH*outW, C*kH*kW]
  for (std::size_t n = 0; n < g.N; ++n)
    for (std::size_t i = 0; i < g.outH; ++i)
      for (std::size_t j = 0; j < g.outW; ++j) {
        T* out = cols.data() + ((n * g.outH + i) * g.outW + j) * row;
        for (std::size_t c = 0; c < g.C; ++c)
          for (std::size_t u = 0; u < g.kH; ++u)
            for (std::size_t v = 0; v < g.kW; ++v) {
              // the input pixel (h, w) = (i*sH + u - pH, j*sW + v - pW), when it is not padding
              const long h = long(i * g.sH + u) - long(g.pH), w = long(j * g.sW + v) - long(g.pW);
              if (h >= 0 && h < long(g.H) && w >= 0 && w < long(g.W))
                out[(c * g.kH + u) * g.kW + v] = x(n, c, std::size_t(h), std::size_t(w));
            }
      }
  return cols;
}

// col2im, im2col's adjoint: adds each entry of dcols [N*outH*outW, C*kH*kW] onto the pixel of
// dx [N, C, H, W] it was read from (a pixel in several windows gets the sum; padding gets nothing).
template <class T>
xt::xarray<T> col2im(const xt::xarray<T>& dcols, const Conv2dGeometry& g) {
  const std::size_t row = g.C * g.kH * g.kW;
  xt::xarray<T> dx = xt::zeros<T>({g.N, g.C, g.H, g.W});
  for (std::size_t n = 0; n < g.N; ++n)
    for (std::size_t i = 0; i < g.outH; ++i)
      for (std::size_t j = 0; j < g.outW; ++j) {
        const T* in = dcols.data() + ((n * g.outH + i) * g.outW + j) * row;
        for (std::size_t c = 0; c < g.C; ++c)
          for (std::size_t u = 0; u < g.kH; ++u)
            for (std::size_t v = 0; v < g.kW; ++v) {
              const long h = long(i * g.sH + u) - long(g.pH), w = long(j * g.sW + v) - long(g.pW);
              if (h >= 0 && h < long(g.H) && w >= 0 && w < long(g.W))
                dx(n, c, std::size_t(h), std::size_t(w)) += in[(c * g.kH + u) * g.kW + v];
            }
      }
  return dx;
}

template <class T>
Tensor conv2d_(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dGeometry& g) {
  const std::size_t O = weight.size(0), K = g.C * g.kH * g.kW, rows = g.N * g.outH * g.outW;
  const xt::xarray<T> cols = im2col(x.data<T>(), g);                  // [N*outH*outW, C*kH*kW]
  const auto W = xt::reshape_view(weight.data<T>(), {O, K});           // [O, C*kH*kW]
  xt::xarray<T> y2 = xt::linalg::dot(cols, xt::transpose(W));         // [N*outH*outW, C*kH*kW] x [C*kH*kW, O] -> [N*outH*outW, O]
  if (bias.defined()) y2 += xt::view(bias.data<T>(), xt::newaxis(), xt::all());  // + b[o] on every row
  y2.reshape({g.N, g.outH, g.outW, O});                               // [N, outH, outW, O]
  xt::xarray<T> y = xt::transpose(y2, {0, 3, 1, 2});                  // [N, O, outH, outW]

  std::vector<Tensor> inputs{x, weight};
  if (bias.defined()) inputs.push_back(bias);
  return record<T>("conv2d", std::move(y), inputs, [g, O, K, rows](Node<T>& out) {
    if (rows == 0) {
      // No images (N = 0): every sum is empty, so the weight's and bias's gradients are zero.
      // xt::linalg::dot does not give the [O, C*kH*kW] zeros of an empty product, so they are written here.
      if (out.input_requires_grad(0)) out.add_to_input_grad(0, xt::xarray<T>(xt::zeros<T>({g.N, g.C, g.H, g.W})));
      if (out.input_requires_grad(1)) out.add_to_input_grad(1, xt::xarray<T>(xt::zeros<T>({O, g.C, g.kH, g.kW})));
      if (out.inputs.size() == 3 && out.input_requires_grad(2)) out.add_to_input_grad(2, xt::xarray<T>(xt::zeros<T>({O})));
      return;
    }
    // G: dL/dy as the matmul's output gradient, [N, O, outH, outW] -> [N, outH, outW, O] -> [N*outH*outW, O]
    xt::xarray<T> G = xt::transpose(out.grad, {0, 2, 3, 1});
    G.reshape({rows, O});                                                 // [N*outH*outW, O]
    const auto W = xt::reshape_view(out.input(1).value, {O, K});          // [O, C*kH*kW]
    if (out.input_requires_grad(0)) {
      // dL/dcols = G W: [N*outH*outW, O] x [O, C*kH*kW] -> [N*outH*outW, C*kH*kW]; col2im sums it onto x
      const xt::xarray<T> dcols = xt::linalg::dot(G, W);
      out.add_to_input_grad(0, col2im(dcols, g));                         // [N, C, H, W]
    }
    if (out.input_requires_grad(1)) {
      // dL/dW = G^T cols: [O, N*outH*outW] x [N*outH*outW, C*kH*kW] -> [O, C*kH*kW]
      const xt::xarray<T> cols = im2col(out.input(0).value, g);           // recomputed: not kept between the passes
      xt::xarray<T> dW = xt::linalg::dot(xt::transpose(G), cols);         // [O, C*kH*kW]
      dW.reshape({O, g.C, g.kH, g.kW});                                   // [O, C, kH, kW]
      out.add_to_input_grad(1, std::move(dW));
    }
    if (out.inputs.size() == 3 && out.input_requires_grad(2)) {
      // dL/db[o] = sum over every output pixel of G[., o]
      out.add_to_input_grad(2, xt::xarray<T>(xt::sum(G, {0})));           // [O]
    }
  });
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2 stride, Size2 padding) {
  if (bias.defined()) check_inputs("conv2d", {&x, &weight, &bias});
  else check_inputs("conv2d", {&x, &weight});
  if (x.dim() != 4) throw ShapeError("conv2d: expected input [N, C, H, W], got " + shape_str(x.shape()));
  if (weight.dim() != 4 || weight.size(1) != x.size(1))
    throw ShapeError("conv2d: expected weight [O, " + std::to_string(x.size(1)) + ", kH, kW] for input " +
                     shape_str(x.shape()) + ", got weight " + shape_str(weight.shape()));
  const std::size_t O = weight.size(0);
  if (O == 0) throw ShapeError("conv2d: expected at least one output channel, got weight " + shape_str(weight.shape()));
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != O))
    throw ShapeError("conv2d: expected bias [" + std::to_string(O) + "] for weight " + shape_str(weight.shape()) +
                     ", got bias " + shape_str(bias.shape()));
  const Conv2dGeometry g = conv2d_geometry("conv2d", x.shape(), {weight.size(2), weight.size(3)}, stride, padding);
  if (fused_ops_enabled()) return fused::conv2d(x, weight, bias, g);
  return ATTN_DISPATCH(x.dtype(), conv2d_, x, weight, bias, g);
}

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::size_t stride, std::size_t padding) {
  return conv2d(x, weight, bias, Size2{stride, stride}, Size2{padding, padding});
}

}  // namespace attn
