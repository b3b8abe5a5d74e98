// The fused path's conv2d: im2col one image at a time and direct gemm calls
// (core/ops/conv2d.cpp is the teaching version, on xt::linalg, and the switch).
//
// Image n's columns are laid out [C*kH*kW, outH*outW] (Caffe's layout), so that
//   y[n] = W cols[n]:  [O, C*kH*kW] x [C*kH*kW, outH*outW] -> [O, outH*outW]
// lands straight in the output's NCHW order: no transpose of y, G or W is ever copied.
// Backward, with G[n] = dL/dy[n] [O, outH*outW]:
//   dW += G[n] cols[n]^T    dcols[n] = W^T G[n]  (col2im adds it onto dx[n])    db[o] += sum G[n][o, :]
// Images run in parallel over attn's threads, each on its own columns buffer; the weight
// gradient's sum over images runs in image order, one product per image, and core/backend/blas.cpp
// splits each of those products over the threads (as it does every product when the images
// are too few to share out). So, as everywhere in attn (core/backend/parallel.hpp), results are
// the same bits run after run at a given number of threads, and may differ in the last bits at another.
#include "conv2d.hpp"

#include "../kernels.hpp"
#include "../record.hpp"
#include "blas.hpp"
#include "parallel.hpp"

#include <algorithm>

namespace attn::fused {

namespace {

// cols [C*kH*kW, outH*outW] of one image x [C, H, W]: cols[(c, u, v), (i, j)] = x_pad[c, i*sH + u, j*sW + v].
template <class T>
void im2col(const T* x, const Conv2dGeometry& g, T* cols) {
  const std::size_t HW = g.H * g.W, out = g.outH * g.outW;
  for (std::size_t c = 0; c < g.C; ++c)
    for (std::size_t u = 0; u < g.kH; ++u)
      for (std::size_t v = 0; v < g.kW; ++v) {
        T* row = cols + ((c * g.kH + u) * g.kW + v) * out;
        for (std::size_t i = 0; i < g.outH; ++i) {
          const long h = long(i * g.sH + u) - long(g.pH);
          T* dst = row + i * g.outW;
          if (h < 0 || h >= long(g.H)) {
            std::fill(dst, dst + g.outW, T(0));
            continue;
          }
          const T* src = x + c * HW + std::size_t(h) * g.W;
          for (std::size_t j = 0; j < g.outW; ++j) {
            const long w = long(j * g.sW + v) - long(g.pW);
            dst[j] = w >= 0 && w < long(g.W) ? src[w] : T(0);
          }
        }
      }
}

// col2im: adds dcols [C*kH*kW, outH*outW] onto dx [C, H, W] of one image.
template <class T>
void col2im(const T* dcols, const Conv2dGeometry& g, T* dx) {
  const std::size_t HW = g.H * g.W, out = g.outH * g.outW;
  for (std::size_t c = 0; c < g.C; ++c)
    for (std::size_t u = 0; u < g.kH; ++u)
      for (std::size_t v = 0; v < g.kW; ++v) {
        const T* row = dcols + ((c * g.kH + u) * g.kW + v) * out;
        for (std::size_t i = 0; i < g.outH; ++i) {
          const long h = long(i * g.sH + u) - long(g.pH);
          if (h < 0 || h >= long(g.H)) continue;
          T* dst = dx + c * HW + std::size_t(h) * g.W;
          const T* src = row + i * g.outW;
          for (std::size_t j = 0; j < g.outW; ++j) {
            const long w = long(j * g.sW + v) - long(g.pW);
            if (w >= 0 && w < long(g.W)) dst[w] += src[j];
          }
        }
      }
}

// Images per share: enough multiply-adds that handing them to another thread pays.
std::size_t image_grain(const Conv2dGeometry& g, std::size_t O) {
  return even_grain(g.N, O * g.C * g.kH * g.kW * g.outH * g.outW, 64 * 1024);
}

template <class T>
Tensor conv2d_(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dGeometry& g) {
  const std::size_t O = weight.size(0), K = g.C * g.kH * g.kW, P = g.outH * g.outW;
  xt::xarray<T> y = xt::xarray<T>::from_shape({g.N, O, g.outH, g.outW});
  const T* X = x.data<T>().data();
  const T* Wt = weight.data<T>().data();
  const T* B = bias.defined() ? bias.data<T>().data() : nullptr;
  T* Y = y.data();
  parallel_for(g.N, image_grain(g, O), [&](std::size_t begin, std::size_t end) {
    std::vector<T> cols(K * P);
    for (std::size_t n = begin; n < end; ++n) {
      T* yn = Y + n * O * P;
      if (B)
        for (std::size_t o = 0; o < O; ++o) std::fill(yn + o * P, yn + (o + 1) * P, B[o]);
      im2col(X + n * g.C * g.H * g.W, g, cols.data());
      // y[n] (+)= W cols[n]: [O, K] x [K, P] -> [O, P]
      blas::gemm(false, false, O, P, K, T(1), Wt, K, cols.data(), P, B ? T(1) : T(0), yn, P);
    }
  });

  std::vector<Tensor> inputs{x, weight};
  if (bias.defined()) inputs.push_back(bias);
  return record<T>("conv2d", std::move(y), inputs, [g, O, K, P](Node<T>& out) {
    const T* G = out.grad.data();
    const T* X = out.input(0).value.data();
    const T* Wt = out.input(1).value.data();
    const std::size_t CHW = g.C * g.H * g.W;
    if (out.input_requires_grad(0)) {
      xt::xarray<T> dx = xt::zeros<T>({g.N, g.C, g.H, g.W});
      parallel_for(g.N, image_grain(g, O), [&](std::size_t begin, std::size_t end) {
        std::vector<T> dcols(K * P);
        for (std::size_t n = begin; n < end; ++n) {
          // dcols[n] = W^T G[n]: [O, K]^T x [O, P] -> [K, P]
          blas::gemm(true, false, K, P, O, T(1), Wt, K, G + n * O * P, P, T(0), dcols.data(), P);
          col2im(dcols.data(), g, dx.data() + n * CHW);
        }
      });
      out.add_to_input_grad(0, std::move(dx));
    }
    if (out.input_requires_grad(1)) {
      // dW = sum_n G[n] cols[n]^T: [O, P] x [K, P]^T -> [O, K], added image after image (beta = 1)
      xt::xarray<T> dW = xt::zeros<T>({O, g.C, g.kH, g.kW});
      std::vector<T> cols(K * P);
      for (std::size_t n = 0; n < g.N; ++n) {
        im2col(X + n * CHW, g, cols.data());
        blas::gemm(false, true, O, K, P, T(1), G + n * O * P, P, cols.data(), P, T(1), dW.data(), K);
      }
      out.add_to_input_grad(1, std::move(dW));
    }
    if (out.inputs.size() == 3 && out.input_requires_grad(2)) {
      xt::xarray<T> db = xt::zeros<T>({O});  // db[o] = sum over images and pixels of G[n, o, :]
      for (std::size_t n = 0; n < g.N; ++n)
        for (std::size_t o = 0; o < O; ++o) {
          const T* row = G + (n * O + o) * P;
          T s = 0;
          for (std::size_t p = 0; p < P; ++p) s += row[p];
          db(o) += s;
        }
      out.add_to_input_grad(2, std::move(db));
    }
  });
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dGeometry& g) {
  return ATTN_DISPATCH(x.dtype(), conv2d_, x, weight, bias, g);
}

}  // namespace attn::fused
