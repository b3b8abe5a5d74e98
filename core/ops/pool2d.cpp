// 2-D max and average pooling, as torch.nn.functional.max_pool2d and avg_pool2d
// (ceil_mode off; avg_pool2d with count_include_pad on, PyTorch's default).
//
// Output pixel (n, c, i, j) reads the window of rows i*sH - pH .. + kH - 1 and columns
// j*sW - pW .. + kW - 1 of x[n, c]; a position outside x is padding.
//   max:  y = the largest real value of the window (padding is -inf);  dL/dx at that value += dL/dy
//   avg:  y = (sum of the window's real values) / (kH*kW);             dL/dx at each real value += dL/dy / (kH*kW)
#include "../pool2d.hpp"

#include "../errors.hpp"
#include "../record.hpp"

#include <cmath>

namespace attn {

namespace {

Conv2dGeometry pool_geometry(const char* op, const Tensor& x, Size2 kernel, std::optional<Size2> stride,
                             Size2 padding) {
  if (!x.defined()) throw ValueError(std::string(op) + ": the input is undefined");
  const Conv2dGeometry g = conv2d_geometry(op, x.shape(), kernel, stride.value_or(kernel), padding);
  // As PyTorch: padding beyond half the kernel would make windows of padding alone.
  if (2 * g.pH > g.kH || 2 * g.pW > g.kW)
    throw ShapeError(std::string(op) + ": padding (" + std::to_string(g.pH) + ", " + std::to_string(g.pW) +
                     ") must be at most half the kernel (" + std::to_string(g.kH) + ", " + std::to_string(g.kW) +
                     ") for input " + shape_str(x.shape()));
  return g;
}

// Calls f(i, j, h, w) for every output pixel (i, j) of one plane and every real input pixel (h, w) of its window,
// in the window's row-major order.
template <class F>
void for_each_window(const Conv2dGeometry& g, const F& f) {
  for (std::size_t i = 0; i < g.outH; ++i)
    for (std::size_t j = 0; j < g.outW; ++j)
      for (std::size_t u = 0; u < g.kH; ++u) {
        const long h = long(i * g.sH + u) - long(g.pH);
        if (h < 0 || h >= long(g.H)) continue;
        for (std::size_t v = 0; v < g.kW; ++v) {
          const long w = long(j * g.sW + v) - long(g.pW);
          if (w >= 0 && w < long(g.W)) f(i, j, std::size_t(h), std::size_t(w));
        }
      }
}

template <class T>
Tensor max_pool2d_(const Tensor& x, const Conv2dGeometry& g) {
  const std::size_t planes = g.N * g.C, in = g.H * g.W, out = g.outH * g.outW;
  xt::xarray<T> y = xt::xarray<T>::from_shape({g.N, g.C, g.outH, g.outW});
  // where each output's maximum sits in its plane (h*W + w): the backward sends the gradient there
  Index argmax = Index::from_shape({planes * out});
  const T* X = x.data<T>().data();
  for (std::size_t p = 0; p < planes; ++p) {
    T* yp = y.data() + p * out;
    std::int64_t* ap = argmax.data() + p * out;
    for (std::size_t o = 0; o < out; ++o) ap[o] = -1;
    for_each_window(g, [&](std::size_t i, std::size_t j, std::size_t h, std::size_t w) {
      const std::size_t o = i * g.outW + j, at = h * g.W + w;
      const T v = X[p * in + at];
      // the first maximum of the window wins; a NaN wins over anything (PyTorch's test, val > max || isnan(val))
      if (ap[o] < 0 || v > yp[o] || std::isnan(v)) {
        yp[o] = v;
        ap[o] = std::int64_t(at);
      }
    });
  }
  return record<T>("max_pool2d", std::move(y), {x}, [g, argmax = std::move(argmax)](Node<T>& out) {
    // dL/dx[argmax of each window] += dL/dy of that window
    const std::size_t planes = g.N * g.C, in = g.H * g.W, n_out = g.outH * g.outW;
    xt::xarray<T> dx = xt::zeros<T>({g.N, g.C, g.H, g.W});
    const T* G = out.grad.data();
    for (std::size_t p = 0; p < planes; ++p)
      for (std::size_t o = 0; o < n_out; ++o) dx.data()[p * in + std::size_t(argmax(p * n_out + o))] += G[p * n_out + o];
    out.add_to_input_grad(0, std::move(dx));
  });
}

template <class T>
Tensor avg_pool2d_(const Tensor& x, const Conv2dGeometry& g) {
  const std::size_t planes = g.N * g.C, in = g.H * g.W, out = g.outH * g.outW;
  const T divisor = T(g.kH * g.kW);  // padding counts: every window divides by its full size
  xt::xarray<T> y = xt::zeros<T>({g.N, g.C, g.outH, g.outW});
  const T* X = x.data<T>().data();
  for (std::size_t p = 0; p < planes; ++p) {
    T* yp = y.data() + p * out;
    for_each_window(g, [&](std::size_t i, std::size_t j, std::size_t h, std::size_t w) {
      yp[i * g.outW + j] += X[p * in + h * g.W + w];
    });
    for (std::size_t o = 0; o < out; ++o) yp[o] /= divisor;
  }
  return record<T>("avg_pool2d", std::move(y), {x}, [g, divisor](Node<T>& out) {
    // dL/dx[h, w] += dL/dy[i, j] / (kH*kW) for every window (i, j) that reads (h, w)
    const std::size_t planes = g.N * g.C, in = g.H * g.W, n_out = g.outH * g.outW;
    xt::xarray<T> dx = xt::zeros<T>({g.N, g.C, g.H, g.W});
    const T* G = out.grad.data();
    for (std::size_t p = 0; p < planes; ++p)
      for_each_window(g, [&](std::size_t i, std::size_t j, std::size_t h, std::size_t w) {
        dx.data()[p * in + h * g.W + w] += G[p * n_out + i * g.outW + j] / divisor;
      });
    out.add_to_input_grad(0, std::move(dx));
  });
}

std::optional<Size2> both(std::optional<std::size_t> s) {
  return s ? std::optional<Size2>(Size2{*s, *s}) : std::nullopt;
}

}  // namespace

Tensor max_pool2d(const Tensor& x, Size2 kernel, std::optional<Size2> stride, Size2 padding) {
  const Conv2dGeometry g = pool_geometry("max_pool2d", x, kernel, stride, padding);
  return ATTN_DISPATCH(x.dtype(), max_pool2d_, x, g);
}

Tensor max_pool2d(const Tensor& x, std::size_t kernel, std::optional<std::size_t> stride, std::size_t padding) {
  return max_pool2d(x, Size2{kernel, kernel}, both(stride), Size2{padding, padding});
}

Tensor avg_pool2d(const Tensor& x, Size2 kernel, std::optional<Size2> stride, Size2 padding) {
  const Conv2dGeometry g = pool_geometry("avg_pool2d", x, kernel, stride, padding);
  return ATTN_DISPATCH(x.dtype(), avg_pool2d_, x, g);
}

Tensor avg_pool2d(const Tensor& x, std::size_t kernel, std::optional<std::size_t> stride, std::size_t padding) {
  return avg_pool2d(x, Size2{kernel, kernel}, both(stride), Size2{padding, padding});
}

}  // namespace attn
