// Wrong solutions of lab 23, each a plausible mistake; labs/tests/test_lab23.cpp proves the grader
// fails every one with a message that points at it.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/23_conv2d.hpp"

#include <algorithm>
#include <xtensor/xview.hpp>

namespace lab {
namespace planted {
namespace conv2d {

using attn::Shape;
using attn::Size2;
using attn::Tensor;
using lab::conv2d::Conv2d;
using lab::conv2d::Grads;
using lab::solutions::conv2d::out_size;

// One mistake each; a learner's forward and backward call their own im2col and col2im, so a mistake of
// those shows in the forward and the backward too.
struct Options {
  // im2col
  bool rows_uvc = false, columns_ijn = false, cols_stride_ignored = false, cols_no_pad_offset = false,
       cols_transposed = false;
  // col2im
  bool overwrite = false, fold_stride_ignored = false, clamped = false, cropped_at_zero = false, padded_shape = false,
       fold_no_plus_one = false;
  // the forward
  bool flipped = false, no_bias = false, y_reshaped = false, y_not_transposed = false;
  // the backward
  bool dw_first_image = false, dw_last_image = false, dw_mean = false, db_first_image = false,
       db_not_over_positions = false, db_mean = false, g_reshaped = false, dw_transposed = false, dx_flipped = false;
  // max-pool's backward
  bool all_ties = false, last_tie = false, split_ties = false, init_zero = false, pad_zero = false,
       pool_overwrite = false, pool_stride_ignored = false, pool_no_pad_offset = false, unravel_kh = false,
       pool_stride_is_kernel = false;
};

inline Tensor im2col(const Options& o, const Tensor& x, Size2 kernel, Size2 stride, Size2 padding) {
  const auto& X = x.data<double>();
  const std::size_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), kH = kernel[0], kW = kernel[1];
  const std::size_t outH = out_size(H, kH, stride[0], padding[0]), outW = out_size(W, kW, stride[1], padding[1]);
  const std::size_t K = C * kH * kW, L = N * outH * outW;
  // cols_transposed: the engine's layout, a row per output pixel
  xt::xarray<double> cols = o.cols_transposed ? xt::xarray<double>(xt::zeros<double>({L, K}))
                                              : xt::xarray<double>(xt::zeros<double>({K, L}));
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t i = 0; i < outH; ++i)
      for (std::size_t j = 0; j < outW; ++j)
        for (std::size_t c = 0; c < C; ++c)
          for (std::size_t u = 0; u < kH; ++u)
            for (std::size_t v = 0; v < kW; ++v) {
              const std::size_t si = o.cols_stride_ignored ? i : i * stride[0];
              const std::size_t sj = o.cols_stride_ignored ? j : j * stride[1];
              const long pH = o.cols_no_pad_offset ? 0 : long(padding[0]), pW = o.cols_no_pad_offset ? 0 : long(padding[1]);
              const long h = long(si + u) - pH, w = long(sj + v) - pW;
              if (h < 0 || h >= long(H) || w < 0 || w >= long(W)) continue;
              const std::size_t row = o.rows_uvc ? (u * kW + v) * C + c : (c * kH + u) * kW + v;
              const std::size_t col = o.columns_ijn ? (i * outW + j) * N + n : (n * outH + i) * outW + j;
              if (o.cols_transposed) cols(col, row) = X(n, c, h, w);
              else cols(row, col) = X(n, c, h, w);
            }
  return Tensor(cols);
}

inline Tensor col2im(const Options& o, const Tensor& dcols, const Shape& xs, Size2 kernel, Size2 stride,
                     Size2 padding) {
  const auto& D = dcols.data<double>();
  const std::size_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], kH = kernel[0], kW = kernel[1];
  // fold_no_plus_one: out = (in + 2p - k) / s, the + 1 forgotten
  const std::size_t outH = out_size(H, kH, stride[0], padding[0]) - (o.fold_no_plus_one ? 1 : 0);
  const std::size_t outW = out_size(W, kW, stride[1], padding[1]) - (o.fold_no_plus_one ? 1 : 0);
  // cropped_at_zero, padded_shape: summed into a padded dx_pad
  const bool pad_buffer = o.cropped_at_zero || o.padded_shape;
  const std::size_t Hb = pad_buffer ? H + 2 * padding[0] : H, Wb = pad_buffer ? W + 2 * padding[1] : W;
  xt::xarray<double> dx = xt::zeros<double>({N, C, Hb, Wb});
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t i = 0; i < outH; ++i)
      for (std::size_t j = 0; j < outW; ++j)
        for (std::size_t c = 0; c < C; ++c)
          for (std::size_t u = 0; u < kH; ++u)
            for (std::size_t v = 0; v < kW; ++v) {
              const double e = D((c * kH + u) * kW + v, (n * outH + i) * outW + j);
              const std::size_t si = o.fold_stride_ignored ? i : i * stride[0];
              const std::size_t sj = o.fold_stride_ignored ? j : j * stride[1];
              long h = long(si + u), w = long(sj + v);
              if (!pad_buffer) h -= long(padding[0]), w -= long(padding[1]);
              // clamped: the padding's entries put on the nearest border pixel
              if (o.clamped) h = std::clamp(h, 0L, long(H) - 1), w = std::clamp(w, 0L, long(W) - 1);
              if (h < 0 || h >= long(Hb) || w < 0 || w >= long(Wb)) continue;
              if (o.overwrite) dx(n, c, h, w) = e;
              else dx(n, c, h, w) += e;
            }
  if (o.cropped_at_zero)  // the first H rows and W columns of dx_pad kept, not rows pH .. pH + H - 1
    return Tensor(xt::xarray<double>(xt::view(dx, xt::all(), xt::all(), xt::range(0, H), xt::range(0, W))));
  return Tensor(dx);
}

// The weight, flipped in u and v.
inline Tensor flip(const Tensor& w) {
  xt::xarray<double> f = w.data<double>();
  const std::size_t kH = w.size(2), kW = w.size(3);
  for (std::size_t o = 0; o < w.size(0); ++o)
    for (std::size_t c = 0; c < w.size(1); ++c)
      for (std::size_t u = 0; u < kH; ++u)
        for (std::size_t v = 0; v < kW; ++v) f(o, c, u, v) = w.data<double>()(o, c, kH - 1 - u, kW - 1 - v);
  return Tensor(f);
}

inline Tensor forward(const Options& o, const Tensor& x, const Tensor& weight, const Tensor& bias, Size2 stride,
                      Size2 padding) {
  const long N = long(x.size(0)), O = long(weight.size(0));
  const Size2 kernel{weight.size(2), weight.size(3)};
  const long outH = long(out_size(x.size(2), kernel[0], stride[0], padding[0]));
  const long outW = long(out_size(x.size(3), kernel[1], stride[1], padding[1]));
  Tensor cols = im2col(o, x, kernel, stride, padding);
  if (o.cols_transposed) cols = attn::transpose(cols, 0, 1);  // the learner's own layout, undone here
  Tensor Y = attn::matmul(attn::reshape(o.flipped ? flip(weight) : weight, {O, -1}), cols);
  if (!o.no_bias) Y = Y + attn::reshape(bias, {O, 1});
  if (o.y_reshaped) return attn::reshape(Y, {N, O, outH, outW});
  if (o.y_not_transposed) return attn::reshape(Y, {O, N, outH, outW});
  return attn::transpose(attn::reshape(Y, {O, N, outH, outW}), 0, 1);
}

inline Grads backward(const Options& o, const Tensor& x, const Tensor& weight, const Tensor& g, Size2 stride,
                      Size2 padding) {
  const long N = long(x.size(0)), O = long(weight.size(0)), C = long(weight.size(1));
  const Size2 kernel{weight.size(2), weight.size(3)};
  const Tensor G = o.g_reshaped ? attn::reshape(g, {O, -1}) : attn::reshape(attn::transpose(g, 0, 1), {O, -1});
  Tensor cols = im2col(o, x, kernel, stride, padding);
  if (o.cols_transposed) cols = attn::transpose(cols, 0, 1);
  const Tensor W = attn::reshape(o.dx_flipped ? flip(weight) : weight, {O, -1});
  const long L = long(G.size(1)) / N;
  Grads d;
  if (o.dw_first_image || o.dw_last_image) {  // one image's columns only
    const long n = o.dw_first_image ? 0 : N - 1;
    const Tensor Gn = attn::narrow(G, 1, std::size_t(n * L), std::size_t(L));
    const Tensor cn = attn::narrow(cols, 1, std::size_t(n * L), std::size_t(L));
    d.weight = attn::matmul(Gn, attn::transpose(cn, 0, 1));
  } else if (o.dw_transposed) {
    d.weight = attn::matmul(cols, attn::transpose(G, 0, 1));  // [C kH kW, O], then reshaped as if [O, ...]
  } else {
    d.weight = attn::matmul(G, attn::transpose(cols, 0, 1));
  }
  if (o.dw_mean) d.weight = d.weight / double(N);
  d.weight = attn::reshape(d.weight, {O, C, long(kernel[0]), long(kernel[1])});
  if (o.db_first_image) d.bias = attn::sum(attn::narrow(G, 1, 0, std::size_t(L)), {1});
  else if (o.db_not_over_positions) d.bias = attn::sum(g, {0});  // [O, outH, outW]
  else if (o.db_mean) d.bias = attn::mean(G, {1});
  else d.bias = attn::sum(G, {1});
  d.x = col2im(o, attn::matmul(attn::transpose(W, 0, 1), G), x.shape(), kernel, stride, padding);
  return d;
}

inline Tensor pool_backward(const Options& o, const Tensor& x, const Tensor& y, const Tensor& g, Size2 kernel,
                            Size2 stride, Size2 padding) {
  const auto& X = x.data<double>();
  const auto& Y = y.data<double>();
  const auto& G = g.data<double>();
  const std::size_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), outH = y.size(2), outW = y.size(3);
  xt::xarray<double> dx = xt::zeros<double>(x.shape());
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t c = 0; c < C; ++c)
      for (std::size_t i = 0; i < outH; ++i)
        for (std::size_t j = 0; j < outW; ++j) {
          // pool_stride_is_kernel: the windows stepped by the kernel, PyTorch's default stride
          const std::size_t sH = o.pool_stride_is_kernel ? kernel[0] : stride[0];
          const std::size_t sW = o.pool_stride_is_kernel ? kernel[1] : stride[1];
          const long h0 = long(o.pool_stride_ignored ? i : i * sH) - (o.pool_no_pad_offset ? 0 : long(padding[0]));
          const long w0 = long(o.pool_stride_ignored ? j : j * sW) - (o.pool_no_pad_offset ? 0 : long(padding[1]));
          auto real = [&](long h, long w) { return h >= 0 && h < long(H) && w >= 0 && w < long(W); };
          if (o.all_ties || o.split_ties) {  // a mask x == y over the window
            std::vector<std::pair<long, long>> at;
            for (std::size_t u = 0; u < kernel[0]; ++u)
              for (std::size_t v = 0; v < kernel[1]; ++v)
                if (real(h0 + long(u), w0 + long(v)) && X(n, c, h0 + long(u), w0 + long(v)) == Y(n, c, i, j))
                  at.push_back({h0 + long(u), w0 + long(v)});
            for (const auto& [h, w] : at) dx(n, c, h, w) += G(n, c, i, j) / (o.split_ties ? double(at.size()) : 1.0);
            continue;
          }
          // the window's best cell; padding read as 0 when pad_zero, the maximum started at 0 when init_zero
          double top = -INFINITY;
          long bh = -2, bw = -2, bk = -1;
          if (o.init_zero) top = 0.0;
          for (std::size_t u = 0; u < kernel[0]; ++u)
            for (std::size_t v = 0; v < kernel[1]; ++v) {
              const long h = h0 + long(u), w = w0 + long(v);
              const bool in = real(h, w);
              if (!in && !o.pad_zero) continue;
              const double value = in ? X(n, c, h, w) : 0.0;
              if (o.last_tie ? value >= top : value > top)
                top = value, bh = in ? h : -1, bw = in ? w : -1, bk = long(u * kernel[1] + v);
            }
          if (bh < 0) continue;  // the padding (or nothing above 0) won: the gradient is lost
          if (o.unravel_kh) {
            bh = h0 + bk / long(kernel[0]), bw = w0 + bk % long(kernel[0]);
            if (!real(bh, bw)) continue;
          }
          if (o.pool_overwrite) dx(n, c, bh, bw) = G(n, c, i, j);
          else dx(n, c, bh, bw) += G(n, c, i, j);
        }
  return Tensor(dx);
}

inline Conv2d with(const Options& o) {
  Conv2d s;
  s.im2col = [o](const Tensor& x, Size2 k, Size2 st, Size2 p) { return im2col(o, x, k, st, p); };
  s.col2im = [o](const Tensor& d, const Shape& xs, Size2 k, Size2 st, Size2 p) { return col2im(o, d, xs, k, st, p); };
  s.conv2d_forward = [o](const Tensor& x, const Tensor& w, const Tensor& b, Size2 st, Size2 p) {
    return forward(o, x, w, b, st, p);
  };
  s.conv2d_backward = [o](const Tensor& x, const Tensor& w, const Tensor& g, Size2 st, Size2 p) {
    return backward(o, x, w, g, st, p);
  };
  s.max_pool2d_backward = [o](const Tensor& x, const Tensor& y, const Tensor& g, Size2 k, Size2 st, Size2 p) {
    return pool_backward(o, x, y, g, k, st, p);
  };
  return s;
}

inline std::vector<Planted<Conv2d>> all() {
  std::vector<Planted<Conv2d>> out;
  auto add = [&](const std::string& mistake, void (*set)(Options&), const std::string& points_at,
                 bool first = false) {
    Options o;
    set(o);
    out.push_back({mistake, with(o), points_at, first});
  };
  // im2col
  add("im2col's rows ordered (u, v, c), channels fastest", [](Options& o) { o.rows_uvc = true; },
      "in the order (u, v, c)", true);
  add("im2col's columns ordered (i, j, n), the image fastest", [](Options& o) { o.columns_ijn = true; },
      "in the order (i, j, n)", true);
  add("im2col ignores the stride (window (i, j) at row i)", [](Options& o) { o.cols_stride_ignored = true; },
      "the stride ignored: the window", true);
  add("im2col forgets to shift the windows by the padding", [](Options& o) { o.cols_no_pad_offset = true; },
      "not shifted by the padding", true);
  add("im2col returns the engine's layout [N outH outW, C kH kW]", [](Options& o) { o.cols_transposed = true; },
      "the transposed layout", true);
  // col2im
  add("col2im overwrites (=) instead of adding", [](Options& o) { o.overwrite = true; }, "overwrites instead of adding",
      true);
  add("col2im ignores the stride", [](Options& o) { o.fold_stride_ignored = true; }, "stride ignored in col2im");
  add("col2im clamps the padding's entries onto the border pixels (padding gradient into the input)",
      [](Options& o) { o.clamped = true; }, "not clamped onto the border pixels");
  add("col2im sums into dx_pad and crops its first H rows and W columns (padding gradient into the input)",
      [](Options& o) { o.cropped_at_zero = true; }, "cropped at rows 0 .. H-1");
  add("col2im's output size without the + 1", [](Options& o) { o.fold_no_plus_one = true; },
      "computed without the + 1", true);
  add("col2im returns the padded dx_pad", [](Options& o) { o.padded_shape = true; }, "the padded input's shape", true);
  // the forward
  add("the kernel flipped (convolution instead of cross-correlation)", [](Options& o) { o.flipped = true; },
      "the kernel flipped", true);
  add("the forward leaves the bias out", [](Options& o) { o.no_bias = true; }, "the bias left out", true);
  add("Y [O, N outH outW] reshaped straight to [N, O, outH, outW]", [](Options& o) { o.y_reshaped = true; },
      "reshaped straight to [N, O, outH, outW]", true);
  add("y returned as [O, N, outH, outW]", [](Options& o) { o.y_not_transposed = true; }, "swap the first two axes",
      true);
  // the backward
  add("dW from the first image only", [](Options& o) { o.dw_first_image = true; }, "dW not summed over the batch",
      true);
  add("dW from the last image only (= over the images)", [](Options& o) { o.dw_last_image = true; },
      "= instead of += over the images", true);
  add("dW averaged over the batch", [](Options& o) { o.dw_mean = true; }, "dW averaged over the batch", true);
  add("db from the first image only", [](Options& o) { o.db_first_image = true; }, "db not summed over the batch",
      true);
  add("db summed over the batch only, not over the positions", [](Options& o) { o.db_not_over_positions = true; },
      "db not summed over every output position", true);
  add("db averaged instead of summed", [](Options& o) { o.db_mean = true; }, "db averaged instead of summed", true);
  add("g reshaped to [O, N outH outW] without the transpose", [](Options& o) { o.g_reshaped = true; },
      "reshaped straight to [O, N outH outW]", true);
  add("dW as cols G^T reshaped to [O, C, kH, kW]", [](Options& o) { o.dw_transposed = true; }, "cols G^T", true);
  add("dx from the kernel flipped", [](Options& o) { o.dx_flipped = true; }, "dcols from the kernel flipped", true);
  // max-pool's backward
  add("max-pool: the gradient to every tied maximum (x == y)", [](Options& o) { o.all_ties = true; },
      "every tied maximum", true);
  add("max-pool: the gradient to the last maximum (>=)", [](Options& o) { o.last_tie = true; },
      "the last maximum of a tie", true);
  add("max-pool: the gradient split between tied maxima", [](Options& o) { o.split_ties = true; },
      "split between tied maxima", true);
  add("max-pool: the maximum started at 0", [](Options& o) { o.init_zero = true; }, "the maximum started at 0", true);
  add("max-pool: the padding read as 0", [](Options& o) { o.pad_zero = true; }, "the padding read as 0", true);
  add("max-pool: the gradient written, not added", [](Options& o) { o.pool_overwrite = true; },
      "written (=) instead of added", true);
  add("max-pool: the stride ignored", [](Options& o) { o.pool_stride_ignored = true; },
      "the stride ignored: window (i, j)", true);
  add("max-pool: the windows not shifted by the padding", [](Options& o) { o.pool_no_pad_offset = true; },
      "the windows not shifted by the padding: window (i, j)", true);
  add("max-pool: the kernel used as the stride", [](Options& o) { o.pool_stride_is_kernel = true; },
      "the kernel used as the stride", true);
  add("max-pool: the window's index unravelled with kH", [](Options& o) { o.unravel_kh = true; },
      "unravelled with kH", true);
  return out;
}

}  // namespace conv2d
}  // namespace planted
}  // namespace lab
