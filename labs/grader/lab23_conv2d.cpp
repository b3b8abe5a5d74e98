// The checks of lab23_conv2d.hpp (compiled into libattn_labs, which the notebook kernel loads).
//
// Every function of the learner's is compared with PyTorch's values (tools/reference/labs.py: F.unfold for
// im2col, F.fold for col2im, F.conv2d and its gradients, F.max_pool2d's gradient), then with its definition or
// the library's op on random shapes, and the backward rules by gradcheck. On a mismatch the grader recomputes
// the result with the usual mistakes (below, on plain arrays) and names the one the learner's values match.
#include "labs/grader/lab23_conv2d.hpp"

#include "labs/grader/grader.hpp"

#include <algorithm>
#include <cmath>
#include <xtensor/xview.hpp>

namespace lab {
namespace conv2d {

using Geo = attn::Conv2dGeometry;

namespace hint {
inline const char* im2col =
    "cols is [C kH kW, N outH outW], out = (in + 2p - k) / s + 1 per dim; column (n outH + i) outW + j holds the "
    "window of output pixel (n, i, j), row (c kH + u) kW + v the pixel x[n, c, i sH + u - pH, j sW + v - pW] "
    "(x_pad's [i sH + u, j sW + v]), 0 where that falls outside x";
inline const char* col2im =
    "col2im runs im2col backwards: dx starts at zero, in x's shape [N, C, H, W]; entry (row (c, u, v), column "
    "(n, i, j)) of dcols is added (+=) onto x[n, c, i sH + u - pH, j sW + v - pW], the pixel im2col read it from, "
    "and dropped where that falls on the padding";
inline const char* forward =
    "cols = im2col(x); Y = W_mat cols + b ([O, C kH kW] x [C kH kW, N outH outW], W_mat the weight reshaped "
    "[O, C kH kW], b[o] added to row o); reshape Y to [O, N, outH, outW], then swap the first two axes "
    "(attn::transpose(Y, 0, 1)) to get [N, O, outH, outW]; no kernel flip: conv2d is a cross-correlation";
inline const char* backward =
    "G = g with its first two axes swapped ([O, N, outH, outW]) and reshaped [O, N outH outW]; dW = G cols^T "
    "reshaped [O, C, kH, kW]; db[o] = the sum of G's row o (every image, every position); dcols = W_mat^T G, "
    "dx = col2im(dcols)";
inline const char* pool =
    "each window's gradient g[n, c, i, j] goes whole to one pixel: the first one, in row-major order over the "
    "window (rows i sH - pH .., columns j sW - pW ..), holding the window's maximum; the padding is -inf, never "
    "picked; add it there (+=): a pixel can be the maximum of several overlapping windows";
}  // namespace hint

inline std::string size2_str(Size2 s) { return "(" + std::to_string(s[0]) + ", " + std::to_string(s[1]) + ")"; }

inline Shape shape_of(const Array& a) { return Shape(a.shape().begin(), a.shape().end()); }

// One case: inputs and their geometry, described for a failure message.
struct Case {
  Array x, weight, bias;  // weight and bias empty for pooling
  Size2 kernel{}, stride{}, padding{};
  Geo geo() const { return attn::conv2d_geometry("lab 23", shape_of(x), kernel, stride, padding); }
  std::string describe(bool with_weight = true) const {
    std::string w = with_weight && weight.dimension() == 4 ? ", weight " + shape_str(shape_of(weight)) : "";
    return "x " + shape_str(shape_of(x)) + w + ", kernel " + size2_str(kernel) + ", stride " + size2_str(stride) +
           ", padding " + size2_str(padding);
  }
};

inline Size2 size2_of(const Array& a) { return {std::size_t(a(0)), std::size_t(a(1))}; }

inline Case case_of(const Reference& ref, const std::string& name, bool conv) {
  Case c;
  c.x = ref.array(name, "x");
  if (conv) c.weight = ref.array(name, "weight"), c.bias = ref.array(name, "bias");
  c.kernel = conv ? Size2{c.weight.shape()[2], c.weight.shape()[3]} : size2_of(ref.array(name, "kernel"));
  c.stride = size2_of(ref.array(name, "stride"));
  c.padding = size2_of(ref.array(name, "padding"));
  return c;
}

// ---- im2col, col2im, the forward and the backward, right and with the usual mistakes, on arrays ----

enum class Cols { right, no_pad_offset, stride_ignored, rows_uvc, columns_ijn };

// x [N, C, H, W] -> [C kH kW, N outH outW].
inline Array im2col_of(const Array& x, const Geo& g, Cols m = Cols::right) {
  const std::size_t K = g.C * g.kH * g.kW, L = g.N * g.outH * g.outW;
  Array cols = xt::zeros<double>({K, L});
  for (std::size_t n = 0; n < g.N; ++n)
    for (std::size_t i = 0; i < g.outH; ++i)
      for (std::size_t j = 0; j < g.outW; ++j)
        for (std::size_t c = 0; c < g.C; ++c)
          for (std::size_t u = 0; u < g.kH; ++u)
            for (std::size_t v = 0; v < g.kW; ++v) {
              const std::size_t row = m == Cols::rows_uvc ? (u * g.kW + v) * g.C + c : (c * g.kH + u) * g.kW + v;
              const std::size_t col = m == Cols::columns_ijn ? (i * g.outW + j) * g.N + n : (n * g.outH + i) * g.outW + j;
              const std::size_t si = m == Cols::stride_ignored ? i : i * g.sH, sj = m == Cols::stride_ignored ? j : j * g.sW;
              const long pH = m == Cols::no_pad_offset ? 0 : long(g.pH), pW = m == Cols::no_pad_offset ? 0 : long(g.pW);
              const long h = long(si + u) - pH, w = long(sj + v) - pW;
              if (h >= 0 && h < long(g.H) && w >= 0 && w < long(g.W)) cols(row, col) = x(n, c, h, w);
            }
  return cols;
}

enum class Fold {
  right, overwrite, overwrite_kernel_outer, stride_ignored, no_pad_offset, clamped, average,
  last_row_dropped, last_column_dropped,  // a loop over the windows that stops one early
  no_plus_one                             // out = (in + 2p - k) / s: the last windows dropped, the columns misread
};

// dcols [C kH kW, N outH outW] -> dx [N, C, H, W].
inline Array col2im_of(const Array& dcols, const Geo& g, Fold m = Fold::right) {
  Array dx = xt::zeros<double>({g.N, g.C, g.H, g.W}), count = xt::zeros<double>({g.N, g.C, g.H, g.W});
  // the windows the loops visit (outH, outW unless a mistake drops the last ones) and the column layout read
  const bool short_rows = m == Fold::last_row_dropped || m == Fold::no_plus_one;
  const bool short_columns = m == Fold::last_column_dropped || m == Fold::no_plus_one;
  const std::size_t oH = g.outH - (short_rows ? 1 : 0), oW = g.outW - (short_columns ? 1 : 0);
  const std::size_t lH = m == Fold::no_plus_one ? oH : g.outH, lW = m == Fold::no_plus_one ? oW : g.outW;
  auto put = [&](std::size_t n, std::size_t i, std::size_t j, std::size_t c, std::size_t u, std::size_t v) {
    const double e = dcols((c * g.kH + u) * g.kW + v, (n * lH + i) * lW + j);
    const std::size_t si = m == Fold::stride_ignored ? i : i * g.sH, sj = m == Fold::stride_ignored ? j : j * g.sW;
    long h = long(si + u), w = long(sj + v);
    if (m != Fold::no_pad_offset) h -= long(g.pH), w -= long(g.pW);  // also a dx_pad cropped at 0, the same
    if (m == Fold::clamped) h = std::clamp(h, 0L, long(g.H) - 1), w = std::clamp(w, 0L, long(g.W) - 1);
    if (h < 0 || h >= long(g.H) || w < 0 || w >= long(g.W)) return;
    if (m == Fold::overwrite || m == Fold::overwrite_kernel_outer) dx(n, c, h, w) = e;
    else dx(n, c, h, w) += e;
    count(n, c, h, w) += 1.0;
  };
  if (m == Fold::overwrite_kernel_outer) {
    for (std::size_t c = 0; c < g.C; ++c)
      for (std::size_t u = 0; u < g.kH; ++u)
        for (std::size_t v = 0; v < g.kW; ++v)
          for (std::size_t n = 0; n < g.N; ++n)
            for (std::size_t i = 0; i < oH; ++i)
              for (std::size_t j = 0; j < oW; ++j) put(n, i, j, c, u, v);
  } else {
    for (std::size_t n = 0; n < g.N; ++n)
      for (std::size_t i = 0; i < oH; ++i)
        for (std::size_t j = 0; j < oW; ++j)
          for (std::size_t c = 0; c < g.C; ++c)
            for (std::size_t u = 0; u < g.kH; ++u)
              for (std::size_t v = 0; v < g.kW; ++v) put(n, i, j, c, u, v);
  }
  if (m == Fold::average)
    for (std::size_t q = 0; q < dx.size(); ++q) dx.flat(q) /= std::max(count.flat(q), 1.0);
  return dx;
}

// Whether every pixel of `got` holds one of the entries col2im adds there (or 0 where none lands), while some
// pixel gets several: what a col2im that overwrites (=) gives, in any loop order.
inline bool overwrote(const Array& dcols, const Geo& g, const Array& got) {
  if (shape_of(got) != Shape{g.N, g.C, g.H, g.W}) return false;
  std::vector<std::vector<double>> entries(got.size());
  for (std::size_t n = 0; n < g.N; ++n)
    for (std::size_t i = 0; i < g.outH; ++i)
      for (std::size_t j = 0; j < g.outW; ++j)
        for (std::size_t c = 0; c < g.C; ++c)
          for (std::size_t u = 0; u < g.kH; ++u)
            for (std::size_t v = 0; v < g.kW; ++v) {
              const long h = long(i * g.sH + u) - long(g.pH), w = long(j * g.sW + v) - long(g.pW);
              if (h >= 0 && h < long(g.H) && w >= 0 && w < long(g.W))
                entries[((n * g.C + c) * g.H + std::size_t(h)) * g.W + std::size_t(w)].push_back(
                    dcols((c * g.kH + u) * g.kW + v, (n * g.outH + i) * g.outW + j));
            }
  bool several = false;
  for (std::size_t q = 0; q < got.size(); ++q) {
    several = several || entries[q].size() > 1;
    const double r = got.flat(q);
    bool one = entries[q].empty() && r == 0.0;
    for (double e : entries[q]) one = one || std::abs(r - e) <= 1e-12 * (1.0 + std::abs(e));
    if (!one) return false;
  }
  return several;
}

inline Array matmul_of(const Array& a, const Array& b) {  // [m, k] x [k, n]
  const std::size_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  Array out = xt::zeros<double>({m, n});
  for (std::size_t r = 0; r < m; ++r)
    for (std::size_t q = 0; q < k; ++q)
      for (std::size_t c = 0; c < n; ++c) out(r, c) += a(r, q) * b(q, c);
  return out;
}

inline Array transposed(const Array& a) { return xt::eval(xt::transpose(a)); }

// The weight [O, C, kH, kW] as W_mat [O, C kH kW], flipped in u and v when `flip`.
inline Array weight_matrix(const Array& w, bool flip) {
  const std::size_t O = w.shape()[0], C = w.shape()[1], kH = w.shape()[2], kW = w.shape()[3];
  Array m = Array::from_shape({O, C * kH * kW});
  for (std::size_t o = 0; o < O; ++o)
    for (std::size_t c = 0; c < C; ++c)
      for (std::size_t u = 0; u < kH; ++u)
        for (std::size_t v = 0; v < kW; ++v)
          m(o, (c * kH + u) * kW + v) = flip ? w(o, c, kH - 1 - u, kW - 1 - v) : w(o, c, u, v);
  return m;
}

// g [N, O, outH, outW] as G [O, N outH outW]; `reshaped`: its memory read as that shape, no transpose.
inline Array g_matrix(const Array& g, bool reshaped) {
  const std::size_t N = g.shape()[0], O = g.shape()[1], L = g.shape()[2] * g.shape()[3];
  Array G = Array::from_shape({O, N * L});
  for (std::size_t k = 0; k < G.size(); ++k) G.flat(k) = g.flat(k);
  if (reshaped) return G;
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t o = 0; o < O; ++o)
      for (std::size_t l = 0; l < L; ++l) G(o, n * L + l) = g.flat((n * O + o) * L + l);
  return G;
}

enum class Fwd { right, flipped, no_bias, reshaped, cols_no_pad_offset, cols_stride_ignored, cols_rows_uvc };

inline Array forward_of(const Case& k, Fwd m = Fwd::right) {
  const Geo g = k.geo();
  const Cols cm = m == Fwd::cols_no_pad_offset    ? Cols::no_pad_offset
                  : m == Fwd::cols_stride_ignored ? Cols::stride_ignored
                  : m == Fwd::cols_rows_uvc       ? Cols::rows_uvc
                                                  : Cols::right;
  Array Y = matmul_of(weight_matrix(k.weight, m == Fwd::flipped), im2col_of(k.x, g, cm));  // [O, N L]
  const std::size_t O = Y.shape()[0], L = g.outH * g.outW;
  if (m != Fwd::no_bias)
    for (std::size_t o = 0; o < O; ++o)
      for (std::size_t c = 0; c < Y.shape()[1]; ++c) Y(o, c) += k.bias(o);
  Array y = Array::from_shape({g.N, O, g.outH, g.outW});
  for (std::size_t n = 0; n < g.N; ++n)
    for (std::size_t o = 0; o < O; ++o)
      for (std::size_t l = 0; l < L; ++l)
        y.flat((n * O + o) * L + l) = m == Fwd::reshaped ? Y.flat((n * O + o) * L + l) : Y(o, n * L + l);
  return y;
}

// A backward with its mistakes: each field says what this learner got wrong, if anything.
struct Bwd {
  Cols cols = Cols::right;  // im2col's mistake, in dW
  Fold fold = Fold::right;  // col2im's mistake, in dx
  bool flipped = false;     // the kernel flipped (dx) or dW flipped
  bool g_reshaped = false;  // g reshaped to [O, N outH outW] without the transpose
  enum { sum, first_image, last_image, mean } dw = sum, db = sum;
  bool dw_transposed = false;  // cols G^T [C kH kW, O] read as [O, C, kH, kW]
};

inline Array dx_of(const Case& k, const Array& gy, const Bwd& b) {
  const Geo g = k.geo();
  const Array dcols = matmul_of(transposed(weight_matrix(k.weight, b.flipped)), g_matrix(gy, b.g_reshaped));
  return col2im_of(dcols, g, b.fold);
}

inline Array dw_of(const Case& k, const Array& gy, const Bwd& b) {
  const Geo g = k.geo();
  Array G = g_matrix(gy, b.g_reshaped), cols = im2col_of(k.x, g, b.cols);
  const std::size_t L = g.outH * g.outW;
  if (b.dw == Bwd::first_image || b.dw == Bwd::last_image) {  // only one image's columns
    const std::size_t n = b.dw == Bwd::first_image ? 0 : g.N - 1;
    G = xt::eval(xt::view(G, xt::all(), xt::range(n * L, (n + 1) * L)));
    cols = xt::eval(xt::view(cols, xt::all(), xt::range(n * L, (n + 1) * L)));
  }
  Array dW = b.dw_transposed ? matmul_of(cols, transposed(G)) : matmul_of(G, transposed(cols));
  if (b.dw == Bwd::mean) dW /= double(g.N);
  Array out = Array::from_shape(shape_of(k.weight));
  if (b.flipped) {  // dW_mat's (c, u, v) placed at (c, kH-1-u, kW-1-v)
    const std::size_t O = out.shape()[0], C = out.shape()[1], kH = out.shape()[2], kW = out.shape()[3];
    for (std::size_t o = 0; o < O; ++o)
      for (std::size_t c = 0; c < C; ++c)
        for (std::size_t u = 0; u < kH; ++u)
          for (std::size_t v = 0; v < kW; ++v) out(o, c, kH - 1 - u, kW - 1 - v) = dW(o, (c * kH + u) * kW + v);
    return out;
  }
  for (std::size_t q = 0; q < out.size(); ++q) out.flat(q) = dW.flat(q);
  return out;
}

inline Array db_of(const Case& k, const Array& gy, const Bwd& b) {
  const Geo g = k.geo();
  const Array G = g_matrix(gy, b.g_reshaped);
  const std::size_t O = G.shape()[0], L = g.outH * g.outW;
  Array db = xt::zeros<double>({O});
  for (std::size_t o = 0; o < O; ++o)
    for (std::size_t c = 0; c < G.shape()[1]; ++c) {
      const std::size_t n = c / L;
      if (b.db == Bwd::first_image && n != 0) continue;
      if (b.db == Bwd::last_image && n != g.N - 1) continue;
      db(o) += G(o, c);
    }
  if (b.db == Bwd::mean) db /= double(G.shape()[1]);
  return db;
}

enum class Pool { right, all_ties, last_tie, split_ties, init_zero, pad_zero, overwrite, stride_ignored, no_pad_offset,
                  unravel_kh, tolerance, column_major, stride_is_kernel };

// dL/dx of y = max_pool2d(x) for g = dL/dy, as a learner with mistake m computes it.
inline Array pool_backward_of(const Array& x, const Array& gy, const Geo& g, Pool m = Pool::right) {
  Array dx = xt::zeros<double>(shape_of(x));
  struct Cell {
    long h, w;
    double value;
  };
  for (std::size_t n = 0; n < g.N; ++n)
    for (std::size_t c = 0; c < g.C; ++c)
      for (std::size_t i = 0; i < g.outH; ++i)
        for (std::size_t j = 0; j < g.outW; ++j) {
          std::vector<Cell> cells;  // the window in row-major order (column_major: by columns); padding as (-1, -1)
                                    // when it is read as 0
          for (std::size_t a = 0; a < g.kH * g.kW; ++a) {
            const std::size_t u = m == Pool::column_major ? a % g.kH : a / g.kW;
            const std::size_t v = m == Pool::column_major ? a / g.kH : a % g.kW;
            const std::size_t sH = m == Pool::stride_is_kernel ? g.kH : g.sH, sW = m == Pool::stride_is_kernel ? g.kW : g.sW;
            const std::size_t si = m == Pool::stride_ignored ? i : i * sH;
            const std::size_t sj = m == Pool::stride_ignored ? j : j * sW;
            const long pH = m == Pool::no_pad_offset ? 0 : long(g.pH), pW = m == Pool::no_pad_offset ? 0 : long(g.pW);
            const long h = long(si + u) - pH, w = long(sj + v) - pW;
            if (h >= 0 && h < long(g.H) && w >= 0 && w < long(g.W)) cells.push_back({h, w, x(n, c, h, w)});
            else if (m == Pool::pad_zero) cells.push_back({-1, -1, 0.0});
          }
          if (cells.empty()) continue;
          // the first maximum: a later value replaces it only when strictly greater
          const bool from_zero = m == Pool::init_zero;
          std::size_t best = 0;
          double top = from_zero ? 0.0 : cells[0].value;
          bool found = !from_zero;
          for (std::size_t q = from_zero ? 0 : 1; q < cells.size(); ++q)
            if (m == Pool::last_tie ? cells[q].value >= top : cells[q].value > top)
              best = q, top = cells[q].value, found = true;
          if (!found) continue;  // init_zero: every value negative, none beat 0
          const double gv = gy(n, c, i, j);
          std::vector<std::size_t> to = {best};
          if (m == Pool::tolerance)  // the first value within 1e-3 of the maximum
            for (std::size_t q = cells.size(); q-- > 0;)
              if (std::abs(cells[q].value - top) < 1e-3) to = {q};
          if (m == Pool::all_ties || m == Pool::split_ties) {
            to.clear();
            for (std::size_t q = 0; q < cells.size(); ++q)
              if (cells[q].value == top) to.push_back(q);
          }
          for (std::size_t q : to) {
            long h = cells[q].h, w = cells[q].w;
            if (h < 0) continue;  // the padding's gradient goes nowhere
            if (m == Pool::unravel_kh) {  // the flat window index k = u kW + v unravelled with kH
              const long si = long(i * g.sH) - long(g.pH), sj = long(j * g.sW) - long(g.pW);
              const long k = (h - si) * long(g.kW) + (w - sj);
              h = si + k / long(g.kH), w = sj + k % long(g.kH);
              if (h < 0 || h >= long(g.H) || w < 0 || w >= long(g.W)) continue;
            }
            const double share = m == Pool::split_ties ? gv / double(to.size()) : gv;
            if (m == Pool::overwrite) dx(n, c, h, w) = share;
            else dx(n, c, h, w) += share;
          }
        }
  return dx;
}

// ---- the named mistakes ----

namespace mistake {
inline const char* no_pad_offset =
    "the windows not shifted by the padding: the window of output (i, j) starts at row i sH - pH and column "
    "j sW - pW of x (x_pad's i sH, j sW), not at row i sH of x";
inline const char* stride_ignored =
    "the stride ignored: the window of output (i, j) starts at row i sH and column j sW of x_pad, not at i and j";
inline const char* rows_uvc =
    "cols' rows in the order (u, v, c): a row of the weight reshaped [O, C kH kW] runs over (c, u, v), c slowest, "
    "so cols' rows must too (row (c kH + u) kW + v)";
inline const char* columns_ijn =
    "cols' columns in the order (i, j, n): the image must be the slowest, column (n outH + i) outW + j, so that Y "
    "[O, N outH outW] reshapes to [O, N, outH, outW]";
inline const char* overwrites =
    "col2im overwrites instead of adding: a pixel read by several overlapping windows must get the sum of their "
    "entries (+=, from a dx of zeros)";
inline const char* average =
    "col2im averages the entries that land on a pixel: the loss depends on that pixel through every window that "
    "read it, so its gradient is their sum, not their mean";
inline const char* fold_stride =
    "the stride ignored in col2im: entry (c, u, v) of column (n, i, j) goes to x[n, c, i sH + u - pH, "
    "j sW + v - pW], not to row i + u";
inline const char* fold_pad_offset =
    "the padding not subtracted in col2im (or, the same, a padded dx_pad cropped at rows 0 .. H-1 and columns "
    "0 .. W-1): the gradient of the padding's first rows and columns lands on x's pixels; entry (c, u, v) of column "
    "(n, i, j) goes to row i sH + u - pH of x, column j sW + v - pW (dx_pad's rows pH .. pH + H - 1 are x's)";
inline const char* fold_last_dropped =
    "col2im skips the last row or column of windows (a loop that stops one early): every column of dcols, the "
    "last windows' too, adds onto dx; i runs over 0 .. outH - 1 and j over 0 .. outW - 1";
inline const char* fold_no_plus_one =
    "col2im's output size computed without the + 1: out = (in + 2p - k) / s + 1 per dim; without it the last "
    "windows are left out and every column index (n outH + i) outW + j is off";
inline const char* clamped =
    "the gradient of the padding added into the input: entries that fall on the padding are dropped (no pixel of x "
    "was read there), not clamped onto the border pixels";
inline const char* flipped =
    "the kernel flipped (a convolution in the textbook sense): PyTorch's conv2d, and this lab's, is a "
    "cross-correlation, w[o, c, u, v] multiplies x_pad[n, c, i sH + u, j sW + v], u and v not reversed";
inline const char* no_bias = "the bias left out: b[o] is added to every output pixel of channel o";
inline const char* y_reshaped =
    "Y [O, N outH outW] reshaped straight to [N, O, outH, outW]: a reshape keeps the memory order, so images and "
    "channels mix; reshape to [O, N, outH, outW], then swap the first two axes (attn::transpose(Y, 0, 1))";
inline const char* dx_flipped =
    "dcols from the kernel flipped: dcols = W_mat^T G with the weight as it is (the flip of the textbook's "
    "'full convolution' form of dx is col2im's placement, already)";
inline const char* g_reshaped =
    "g [N, O, outH, outW] reshaped straight to [O, N outH outW]: swap its first two axes first "
    "(attn::transpose(g, 0, 1)), then reshape, or images and channels mix";
inline const char* dw_flipped = "dW flipped: dW = G cols^T reshaped [O, C, kH, kW], u and v as they are";
inline const char* dw_first =
    "dW not summed over the batch: only image 0's G_0 cols_0^T; dW adds every image's product (one product over "
    "all N outH outW columns does it)";
inline const char* dw_last =
    "dW not summed over the batch: only the last image's product kept (= instead of += over the images)";
inline const char* dw_mean =
    "dW averaged over the batch, not summed over the batch: the loss adds every image's terms, so does its gradient";
inline const char* dw_transposed =
    "dW taken as cols G^T ([C kH kW, O]) and reshaped to [O, C, kH, kW] without a transpose: dW = G cols^T, "
    "[O, C kH kW]";
inline const char* db_first =
    "db not summed over the batch: db[o] sums g[n, o, i, j] over every image n and every output position (i, j)";
inline const char* db_last =
    "db not summed over the batch: only the last image's sum kept (= instead of += over the images)";
inline const char* db_mean =
    "db averaged instead of summed: db[o] is the sum of g[n, o, i, j] over every image and every output position";
inline const char* all_ties =
    "the gradient sent to every tied maximum (a mask x == y): in a tie it goes whole to the first maximum of the "
    "window, in row-major order, as PyTorch's";
inline const char* last_tie =
    "the gradient sent to the last maximum of a tie (>= instead of >): the first maximum wins, a later equal "
    "value does not replace it";
inline const char* split_ties =
    "the gradient split between tied maxima: PyTorch gives it whole to the first maximum of the window";
inline const char* init_zero =
    "the maximum started at 0: a window whose values are all negative then sends its gradient nowhere; start from "
    "the window's first real value (or -infinity)";
inline const char* pad_zero =
    "the padding read as 0, not -inf: a window over the padding whose real values are all negative gives its "
    "gradient to the padding, and x loses it";
inline const char* pool_overwrite =
    "the gradient written (=) instead of added: a pixel that is the maximum of several overlapping windows gets "
    "the sum of their gradients";
inline const char* pool_stride =
    "the stride ignored: window (i, j) starts at row i sH - pH and column j sW - pW of x";
inline const char* pool_stride_is_kernel =
    "the kernel used as the stride (PyTorch's default when the stride is left out): the stride is given here, "
    "window (i, j) starts at row i sH - pH and column j sW - pW of x";
inline const char* pool_pad_offset =
    "the windows not shifted by the padding: window (i, j) starts at row i sH - pH of x, not i sH";
inline const char* tolerance =
    "a comparison with a tolerance (|x - y| < 1e-3, say): it takes a value just below the maximum when that comes "
    "first in the window; compare exactly (x == y), or keep the strictly greater value while scanning";
inline const char* column_major =
    "the window scanned column by column: the first maximum is the first in row-major order (row by row, each "
    "row left to right), as PyTorch's";
inline const char* unravel_kh =
    "the window's flat index k = u kW + v unravelled with kH: u = k / kW and v = k % kW";
}  // namespace mistake

// "; your values are what this mistake gives: ..." for the first mistake whose values match `got`, or "".
template <class M, class F>
std::string named(const Array& got, const std::vector<std::pair<M, const char*>>& mistakes, const F& values_of) {
  for (const auto& [m, what] : mistakes) {
    Array expected;
    try {
      expected = values_of(m);
    } catch (const std::exception&) {
      continue;
    }
    try {
      expect_close("", expected, got, "", 1e-9, 1e-11);
    } catch (const Mismatch&) {
      continue;
    }
    return std::string("; your values are what this mistake gives: ") + what;
  }
  return "";
}

// A mismatch with the mistake named, if one matched; the check's hint then gives the right formula.
inline Mismatch with_mistake(const Mismatch& e, const std::string& named_text) {
  return Mismatch(e.what() + named_text, e.hint);
}

// ---- im2col ----

inline std::string cols_shape_named(const Shape& got, const Geo& g) {
  const std::size_t K = g.C * g.kH * g.kW, L = g.N * g.outH * g.outW;
  if (got == Shape{L, K} && L != K)
    return "; that is the transposed layout (a row per output pixel): this lab's cols is [C kH kW, N outH outW], a "
           "column per output pixel";
  if (got.size() == 2 && got[0] == K) {
    const std::size_t H0 = (g.H - std::min(g.H, g.kH)) / g.sH + 1, W0 = (g.W - std::min(g.W, g.kW)) / g.sW + 1;
    const std::size_t Hs = g.H + 2 * g.pH - g.kH + 1, Ws = g.W + 2 * g.pW - g.kW + 1;
    if ((g.pH || g.pW) && g.H >= g.kH && g.W >= g.kW && got[1] == g.N * H0 * W0)
      return "; that many columns are the output size without the padding: out = (in + 2p - k) / s + 1 per dim";
    // one padding used for both dims (padding[0] for the columns too, or padding[1] for the rows)
    auto out = [](std::size_t in, std::size_t k, std::size_t s, std::size_t p) {
      return in + 2 * p >= k ? (in + 2 * p - k) / s + 1 : 0;
    };
    if (g.pH != g.pW && (got[1] == g.N * out(g.H, g.kH, g.sH, g.pH) * out(g.W, g.kW, g.sW, g.pH) ||
                         got[1] == g.N * out(g.H, g.kH, g.sH, g.pW) * out(g.W, g.kW, g.sW, g.pW)))
      return "; that many columns are the output size with one padding used for both dims: out = (in + 2p - k) / s "
             "+ 1 per dim, each dim with its own p (padding[0] for the rows, padding[1] for the columns)";
    if ((g.sH > 1 || g.sW > 1) && got[1] == g.N * Hs * Ws)
      return "; that many columns are the output size with a stride of 1 (the stride ignored, or the other dim's "
             "used): out = (in + 2p - k) / s + 1 per dim, each dim with its own stride";
    return "; out = (in + 2p - k) / s + 1 per dim (integer division: a last partial window is dropped), and cols "
           "has N outH outW columns";
  }
  return "";
}

inline void expect_cols(const Array& expected, const Tensor& got_t, const Case& k) {
  const Geo g = k.geo();
  const Array got = array_of(got_t, "cols");
  try {
    expect_close("cols", expected, got, k.describe(false), 1e-12, 1e-12);
  } catch (const Mismatch& e) {
    if (shape_of(got) != shape_of(expected)) throw Mismatch(e.what() + cols_shape_named(shape_of(got), g));
    const std::vector<std::pair<Cols, const char*>> list = {{Cols::no_pad_offset, mistake::no_pad_offset},
                                                             {Cols::stride_ignored, mistake::stride_ignored},
                                                             {Cols::rows_uvc, mistake::rows_uvc},
                                                             {Cols::columns_ijn, mistake::columns_ijn}};
    std::string text = named(got, list, [&](Cols m) { return im2col_of(k.x, g, m); });
    throw with_mistake(e, text);
  }
}

// ---- col2im ----

inline void expect_col2im(const Conv2d& s, const Array& dcols, const Array& expected, const Case& k) {
  const Geo g = k.geo();
  Tensor got_t;
  {
    attn::no_grad guard;
    got_t = s.col2im(Tensor(dcols), shape_of(k.x), k.kernel, k.stride, k.padding);
  }
  const Array got = array_of(got_t, "dx");
  try {
    expect_close("dx", expected, got, k.describe(false) + ", dcols " + shape_str(shape_of(dcols)), 1e-10, 1e-12);
  } catch (const Mismatch& e) {
    const Shape gs = shape_of(got);
    if (gs == Shape{g.N, g.C, g.H + 2 * g.pH, g.W + 2 * g.pW} && (g.pH || g.pW))
      throw Mismatch(e.what() + std::string("; that is the padded input's shape: the gradient of the padding is not "
                                            "the input's (no pixel of x is there), drop those rows and columns"));
    if (gs != shape_of(expected)) throw;
    if (overwrote(dcols, g, got))
      throw Mismatch(e.what() + std::string("; each of your pixels holds one of the entries that land there, not "
                                            "their sum: ") + mistake::overwrites);
    const std::vector<std::pair<Fold, const char*>> list = {
        {Fold::overwrite, mistake::overwrites},         {Fold::overwrite_kernel_outer, mistake::overwrites},
        {Fold::stride_ignored, mistake::fold_stride},   {Fold::no_pad_offset, mistake::fold_pad_offset},
        {Fold::clamped, mistake::clamped},              {Fold::average, mistake::average},
        {Fold::no_plus_one, mistake::fold_no_plus_one}, {Fold::last_row_dropped, mistake::fold_last_dropped},
        {Fold::last_column_dropped, mistake::fold_last_dropped}};
    std::string text = named(got, list, [&](Fold m) { return col2im_of(dcols, g, m); });
    throw with_mistake(e, text);
  }
}

// ---- the forward ----

inline void expect_forward(const Conv2d& s, const Case& k, const Array& expected) {
  const Geo g = k.geo();
  Tensor got_t;
  {
    attn::no_grad guard;
    got_t = s.conv2d_forward(Tensor(k.x), Tensor(k.weight), Tensor(k.bias), k.stride, k.padding);
  }
  const Array got = array_of(got_t, "y");
  try {
    expect_close("y", expected, got, k.describe(), 1e-10, 1e-12);
  } catch (const Mismatch& e) {
    const std::size_t O = k.weight.shape()[0];
    const Shape gs = shape_of(got);
    if (gs == Shape{O, g.N, g.outH, g.outW} && O != g.N)
      throw Mismatch(e.what() + std::string("; that is [O, N, outH, outW]: swap the first two axes "
                                            "(attn::transpose(Y, 0, 1)) to get [N, O, outH, outW]"));
    if (gs == Shape{O, g.N * g.outH * g.outW})
      throw Mismatch(e.what() + std::string("; that is Y = W_mat cols + b itself: reshape it to [O, N, outH, outW] "
                                            "and swap the first two axes"));
    if (gs.size() == 4 && gs[0] == g.N && gs[1] == O && gs != shape_of(expected))
      throw Mismatch(e.what() + std::string("; out = (in + 2p - k) / s + 1 per dim"));
    if (gs != shape_of(expected)) throw;
    const std::vector<std::pair<Fwd, const char*>> list = {
        {Fwd::flipped, mistake::flipped},
        {Fwd::no_bias, mistake::no_bias},
        {Fwd::reshaped, mistake::y_reshaped},
        {Fwd::cols_no_pad_offset, mistake::no_pad_offset},
        {Fwd::cols_stride_ignored, mistake::stride_ignored},
        {Fwd::cols_rows_uvc, mistake::rows_uvc}};
    std::string text = named(got, list, [&](Fwd m) { return forward_of(k, m); });
    throw with_mistake(e, text);
  }
}

// ---- the backward: the learner's rule as an op of the graph (its forward the library's conv2d) ----

// The learner's three gradients, with the shapes checked first and their usual wrong shapes named.
inline std::vector<Tensor> backward_rule(const Conv2d& s, const std::vector<Tensor>& in, const Tensor& gy, Size2 stride,
                                         Size2 padding) {
  const Grads d = s.conv2d_backward(in[0], in[1], gy, stride, padding);
  const Shape xs = in[0].shape(), ws = in[1].shape();
  const std::size_t O = ws[0], K = ws[1] * ws[2] * ws[3];
  if (d.bias.defined() && d.bias.shape() != Shape{O}) {
    const Shape bs = d.bias.shape();
    if (bs.size() > 1 && bs[0] == O)
      throw Mismatch("conv2d_backward returned db of shape " + shape_str(bs) + " for bias [" + std::to_string(O) +
                         "]: db not summed over every output position",
                     "db[o] = the sum of g[n, o, i, j] over every image n and every output position (i, j): "
                     "attn::sum(g, {0, 2, 3})");
    if (bs.size() > 1 && bs[1] == O)
      throw Mismatch("conv2d_backward returned db of shape " + shape_str(bs) + " for bias [" + std::to_string(O) +
                         "]: db not summed over the batch and every output position",
                     "db[o] = the sum of g[n, o, i, j] over every image n and every output position (i, j): "
                     "attn::sum(g, {0, 2, 3})");
  }
  if (d.weight.defined() && d.weight.shape() != ws && d.weight.shape() == Shape{K, O})
    throw Mismatch("conv2d_backward returned dW of shape " + shape_str(d.weight.shape()) + " for weight " +
                       shape_str(ws) + ": that is cols G^T; dW = G cols^T [O, C kH kW], reshaped [O, C, kH, kW]",
                   hint::backward);
  if (d.x.defined() && d.x.dim() == 4 && d.x.shape() != xs && d.x.size(2) == xs[2] + 2 * padding[0] &&
      d.x.size(3) == xs[3] + 2 * padding[1])
    throw Mismatch("conv2d_backward returned dx of shape " + shape_str(d.x.shape()) + " for x " + shape_str(xs) +
                       ", the padded input's: the gradient of the padding is not the input's, drop those rows and "
                       "columns",
                   hint::col2im);
  return {d.x, d.weight, d.bias};
}

inline Tensor conv_op(const Conv2d& s, const Tensor& x, const Tensor& w, const Tensor& b, Size2 stride, Size2 padding) {
  Tensor value;
  {
    attn::no_grad guard;
    value = attn::conv2d(x, w, b, stride, padding);
  }
  return learner_op("conv2d_backward", value, {x, w, b}, {"x", "weight", "bias"},
                    [s, stride, padding](const std::vector<Tensor>& in, const Tensor&, const Tensor& g) {
                      return backward_rule(s, in, g, stride, padding);
                    });
}

inline void expect_backward(const Conv2d& s, const Case& k, const Array& r, const Array& gx, const Array& gw,
                            const Array& gb) {
  Tensor x(k.x, true), w(k.weight, true), b(k.bias, true);
  conv_op(s, x, w, b, k.stride, k.padding).backward(Tensor(r));
  const std::string inputs = k.describe();
  auto with = [](auto f) {
    Bwd b;
    f(b);
    return b;
  };
  try {
    expect_close("dx", gx, x.grad(), inputs);
  } catch (const Mismatch& e) {
    const Array got = array_of(x.grad(), "dx");
    std::vector<std::pair<Bwd, const char*>> list = {
        {with([](Bwd& b) { b.flipped = true; }), mistake::dx_flipped},
        {with([](Bwd& b) { b.g_reshaped = true; }), mistake::g_reshaped},
        {with([](Bwd& b) { b.fold = Fold::overwrite; }), mistake::overwrites},
        {with([](Bwd& b) { b.fold = Fold::overwrite_kernel_outer; }), mistake::overwrites},
        {with([](Bwd& b) { b.fold = Fold::stride_ignored; }), mistake::fold_stride},
        {with([](Bwd& b) { b.fold = Fold::no_pad_offset; }), mistake::fold_pad_offset},
        {with([](Bwd& b) { b.fold = Fold::clamped; }), mistake::clamped},
        {with([](Bwd& b) { b.fold = Fold::average; }), mistake::average},
        {with([](Bwd& b) { b.fold = Fold::no_plus_one; }), mistake::fold_no_plus_one},
        {with([](Bwd& b) { b.fold = Fold::last_row_dropped; }), mistake::fold_last_dropped},
        {with([](Bwd& b) { b.fold = Fold::last_column_dropped; }), mistake::fold_last_dropped}};
    const std::string text = named(got, list, [&](const Bwd& m) { return dx_of(k, r, m); });
    throw with_mistake(e, text);
  }
  try {
    expect_close("dW", gw, w.grad(), inputs);
  } catch (const Mismatch& e) {
    const Array got = array_of(w.grad(), "dW");
    std::vector<std::pair<Bwd, const char*>> list = {
        {with([](Bwd& b) { b.dw = Bwd::first_image; }), mistake::dw_first},
        {with([](Bwd& b) { b.dw = Bwd::last_image; }), mistake::dw_last},
        {with([](Bwd& b) { b.dw = Bwd::mean; }), mistake::dw_mean},
        {with([](Bwd& b) { b.flipped = true; }), mistake::dw_flipped},
        {with([](Bwd& b) { b.g_reshaped = true; }), mistake::g_reshaped},
        {with([](Bwd& b) { b.dw_transposed = true; }), mistake::dw_transposed},
        {with([](Bwd& b) { b.cols = Cols::no_pad_offset; }), mistake::no_pad_offset},
        {with([](Bwd& b) { b.cols = Cols::stride_ignored; }), mistake::stride_ignored},
        {with([](Bwd& b) { b.cols = Cols::rows_uvc; }), mistake::rows_uvc}};
    const std::string text = named(got, list, [&](const Bwd& m) { return dw_of(k, r, m); });
    throw with_mistake(e, text);
  }
  try {
    expect_close("db", gb, b.grad(), inputs);
  } catch (const Mismatch& e) {
    const Array got = array_of(b.grad(), "db");
    std::vector<std::pair<Bwd, const char*>> list = {{with([](Bwd& b) { b.db = Bwd::first_image; }), mistake::db_first},
                                                     {with([](Bwd& b) { b.db = Bwd::last_image; }), mistake::db_last},
                                                     {with([](Bwd& b) { b.db = Bwd::mean; }), mistake::db_mean},
                                                     {with([](Bwd& b) { b.g_reshaped = true; }), mistake::g_reshaped}};
    const std::string text = named(got, list, [&](const Bwd& m) { return db_of(k, r, m); });
    throw with_mistake(e, text);
  }
}

// ---- max-pool's backward: the learner's rule as an op of the graph (its forward the library's) ----

inline Tensor pool_op(const Conv2d& s, const Tensor& x, Size2 kernel, Size2 stride, Size2 padding) {
  Tensor value;
  {
    attn::no_grad guard;
    value = attn::max_pool2d(x, kernel, stride, padding);
  }
  return learner_op("max_pool2d_backward", value, {x}, {"x"},
                    [s, kernel, stride, padding](const std::vector<Tensor>& in, const Tensor& y, const Tensor& g) {
                      return std::vector<Tensor>{s.max_pool2d_backward(in[0], y, g, kernel, stride, padding)};
                    });
}

inline void expect_pool(const Conv2d& s, const Case& k, const Array& r, const Array& expected) {
  Tensor x(k.x, true);
  pool_op(s, x, k.kernel, k.stride, k.padding).backward(Tensor(r));
  try {
    expect_close("dx", expected, x.grad(), k.describe(), 1e-12, 1e-12);
  } catch (const Mismatch& e) {
    const Array got = array_of(x.grad(), "dx");
    const Geo g = k.geo();
    const std::vector<std::pair<Pool, const char*>> list = {
        {Pool::all_ties, mistake::all_ties},         {Pool::last_tie, mistake::last_tie},
        {Pool::split_ties, mistake::split_ties},     {Pool::pad_zero, mistake::pad_zero},
        {Pool::init_zero, mistake::init_zero},       {Pool::overwrite, mistake::pool_overwrite},
        {Pool::stride_ignored, mistake::pool_stride}, {Pool::no_pad_offset, mistake::pool_pad_offset},
        {Pool::unravel_kh, mistake::unravel_kh},       {Pool::tolerance, mistake::tolerance},
        {Pool::column_major, mistake::column_major}, {Pool::stride_is_kernel, mistake::pool_stride_is_kernel}};
    const std::string text = named(got, list, [&](Pool m) { return pool_backward_of(k.x, r, g, m); });
    throw with_mistake(e, text);
  }
}

// ---- random cases ----

// N 1..3, C 1..3, H, W 1..7, padding 0..2, kernels 1..4 (at most the padded size), strides 1..3; pooling: padding
// at most half the kernel, as PyTorch requires. `ties`: values from {-2, -1, 0, 1, 2}.
inline Case random_case(Random& rng, bool conv, bool ties = false) {
  Case k;
  const std::size_t N = rng.integer(1, 3), C = rng.integer(1, 3), H = rng.integer(1, 7), W = rng.integer(1, 7);
  for (int d = 0; d < 2; ++d) {
    const std::size_t in = d == 0 ? H : W;
    std::size_t kk = rng.integer(1, 4), p = rng.integer(0, 2);
    if (!conv) p = std::min(p, kk / 2);
    if (kk > in + 2 * p) kk = in + 2 * p;
    if (!conv) p = std::min(p, kk / 2);
    k.kernel[d] = kk, k.padding[d] = p, k.stride[d] = rng.integer(1, 3);
  }
  k.x = rng.array({N, C, H, W}, -1.0, 1.0);
  if (ties)
    for (double& v : k.x) v = std::round(2.0 * v);
  if (conv) {
    const std::size_t O = rng.integer(1, 3);
    k.weight = rng.array({O, C, k.kernel[0], k.kernel[1]}, -1.0, 1.0);
    k.bias = rng.array({O}, -1.0, 1.0);
  }
  return k;
}

const char* const conv_cases[] = {"conv_stride2_pad1", "conv_nonsquare", "conv_odd"};
const char* const strided = "stride 2 padding 1; kernel (2, 3) stride (1, 2) padding (1, 0); kernel (3, 2) stride (2, 3)";

Result grade(const Conv2d& s, std::ostream& os) {
  Grader grader(23, "conv2d by im2col, forward and backward, and max_pool2d's backward", os);
  Reference ref("lab23_conv2d");
  auto im2col = [&](const Case& k) {
    attn::no_grad guard;
    return s.im2col(Tensor(k.x), k.kernel, k.stride, k.padding);
  };

  // im2col
  grader.check("im2col vs PyTorch's unfold (x [2, 3, 5, 6], kernel (3, 3), stride 1, no padding)", hint::im2col, [&] {
    const Case k = case_of(ref, "conv_3x3", true);
    expect_cols(ref.array("conv_3x3", "cols"), im2col(k), k);
  });
  grader.check(std::string("im2col vs PyTorch's unfold with strides and padding (") + strided + ")", hint::im2col,
               [&] {
                 for (const char* c : conv_cases) {
                   const Case k = case_of(ref, c, true);
                   expect_cols(ref.array(c, "cols"), im2col(k), k);
                 }
               });
  grader.check("im2col: random shapes, kernels, strides and padding", hint::im2col, [&] {
    Random rng(2300);
    for (int trial = 0; trial < 20; ++trial) {
      const Case k = random_case(rng, true);
      expect_cols(im2col_of(k.x, k.geo()), im2col(k), k);
    }
  });

  // col2im
  grader.check("col2im vs PyTorch's fold: overlapping windows add (x [2, 3, 5, 6], kernel (3, 3), stride 1)",
               hint::col2im, [&] {
                 const Case k = case_of(ref, "conv_3x3", true);
                 expect_col2im(s, ref.array("conv_3x3", "dcols"), ref.array("conv_3x3", "col2im"), k);
               });
  grader.check(std::string("col2im vs PyTorch's fold with strides and padding (") + strided + ")", hint::col2im, [&] {
    for (const char* c : conv_cases) {
      const Case k = case_of(ref, c, true);
      expect_col2im(s, ref.array(c, "dcols"), ref.array(c, "col2im"), k);
    }
  });
  grader.check("col2im: random shapes, kernels, strides and padding (im2col's adjoint)", hint::col2im, [&] {
    Random rng(2310);
    for (int trial = 0; trial < 20; ++trial) {
      const Case k = random_case(rng, true);
      const Geo g = k.geo();
      const Array dcols = rng.array({g.C * g.kH * g.kW, g.N * g.outH * g.outW});
      expect_col2im(s, dcols, col2im_of(dcols, g), k);
    }
  });

  // the forward
  grader.check("conv2d forward vs PyTorch (x [2, 3, 5, 6], weight [4, 3, 3, 3], bias [4])", hint::forward, [&] {
    expect_forward(s, case_of(ref, "conv_3x3", true), ref.array("conv_3x3", "y"));
  });
  grader.check(std::string("conv2d forward vs PyTorch with strides, padding and non-square kernels (") + strided + ")",
               hint::forward, [&] {
                 for (const char* c : conv_cases) expect_forward(s, case_of(ref, c, true), ref.array(c, "y"));
               });
  grader.check("conv2d forward vs attn::conv2d (random shapes, kernels, strides and padding)", hint::forward, [&] {
    Random rng(2320);
    for (int trial = 0; trial < 20; ++trial) {
      const Case k = random_case(rng, true);
      Tensor y;
      {
        attn::no_grad guard;
        y = attn::conv2d(Tensor(k.x), Tensor(k.weight), Tensor(k.bias), k.stride, k.padding);
      }
      expect_forward(s, k, y.data<double>());
    }
  });

  // the backward
  auto fixed_backward = [&](const std::string& c) {
    expect_backward(s, case_of(ref, c, true), ref.array(c, "r"), ref.array(c, "grad_x"), ref.array(c, "grad_weight"),
                    ref.array(c, "grad_bias"));
  };
  grader.check("conv2d backward: dx, dW and db vs PyTorch (x [2, 3, 5, 6], weight [4, 3, 3, 3], of sum(y r))",
               hint::backward, [&] { fixed_backward("conv_3x3"); });
  grader.check(std::string("conv2d backward vs PyTorch with strides, padding and non-square kernels (") + strided +
                   ")",
               hint::backward, [&] {
                 for (const char* c : conv_cases) fixed_backward(c);
               });
  grader.check("conv2d backward: gradcheck of x, weight and bias (random shapes, kernels, strides and padding)",
               hint::backward, [&] {
                 Random rng(2330);
                 for (int trial = 0; trial < 8; ++trial) {
                   const Case k = random_case(rng, true);
                   expect_gradients(
                       "conv2d_backward (" + k.describe() + ")",
                       [&](const std::vector<Tensor>& in) {
                         return conv_op(s, in[0], in[1], in[2], k.stride, k.padding);
                       },
                       {Tensor(k.x, true), Tensor(k.weight, true), Tensor(k.bias, true)}, {"x", "weight", "bias"});
                 }
               });

  // max-pool's backward
  auto fixed_pool = [&](const std::vector<std::string>& cases) {
    for (const std::string& c : cases)
      expect_pool(s, case_of(ref, c, false), ref.array(c, "r"), ref.array(c, "grad_x"));
  };
  grader.check("max_pool2d backward vs PyTorch (2x2; 3x3 stride 2 padding 1; (2, 3) stride (1, 2) padding 1; 3x3 "
               "stride 1, overlapping)",
               hint::pool,
               [&] { fixed_pool({"pool_2x2", "pool_3x3_stride2_pad1", "pool_nonsquare", "pool_overlap"}); });
  grader.check("max_pool2d backward vs PyTorch: ties go to the first maximum (values from {0, 1, 2}, 3x3 stride "
               "(1, 2) padding 1; a plateau, 2x2; near ties, the same values 1e-6 apart)",
               hint::pool, [&] { fixed_pool({"ties_overlap", "ties_plateau", "ties_near"}); });
  grader.check("max_pool2d backward vs PyTorch: negative values beside the padding (3x3 stride 2 padding 1; (2, 3) "
               "stride 1 padding 1)",
               hint::pool, [&] { fixed_pool({"negative_padded", "negative_padded_nonsquare"}); });
  grader.check("max_pool2d backward vs attn::max_pool2d (random shapes, kernels, strides, padding, tied values)",
               hint::pool, [&] {
                 Random rng(2340);
                 for (int trial = 0; trial < 20; ++trial) {
                   const Case k = random_case(rng, false, true);
                   Tensor x(k.x, true);
                   Tensor y = attn::max_pool2d(x, k.kernel, k.stride, k.padding);
                   const Array r = rng.array(y.shape());
                   y.backward(Tensor(r));
                   expect_pool(s, k, r, x.grad().data<double>());
                 }
               });
  grader.check("max_pool2d backward: gradcheck (random shapes, kernels, strides and padding, no ties)", hint::pool,
               [&] {
                 Random rng(2350);
                 for (int trial = 0; trial < 8; ++trial) {
                   const Case k = random_case(rng, false);
                   expect_gradients(
                       "max_pool2d_backward (" + k.describe() + ")",
                       [&](const std::vector<Tensor>& in) { return pool_op(s, in[0], k.kernel, k.stride, k.padding); },
                       {Tensor(k.x, true)}, {"x"});
                 }
               });
  return grader.finish();
}

}  // namespace conv2d
}  // namespace lab
