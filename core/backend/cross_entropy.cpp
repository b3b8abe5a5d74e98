// The fused path's cross-entropy: the loss of every row of logits [..., C] in
// one op. nn::cross_entropy (nn/loss.cpp) composes it from a target
// distribution q [..., C], log_softmax, mul and sum; with V = 8,000 classes
// those are five [N, V] arrays in the graph. Here the forward keeps one number
// per row (its log-sum-exp) and the backward writes the one gradient array.
//
//   loss_i = -sum_c q_ic log p_ic = w_i lse_i - sum_c q_ic x_ic,   lse_i = log sum_c exp(x_ic)
//   d loss_i / d x_ic = w_i p_ic - q_ic,                            p_ic = exp(x_ic - lse_i)
// with q_ic = s / C + (1 - s) [c == t_i] and w_i = sum_c q_ic = 1, or q_i = 0 and
// w_i = 0 where t_i is ignore_index (s: the label smoothing).

#include "../kernels.hpp"
#include "../record.hpp"
#include "parallel.hpp"
#include "vecmath.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace attn {

namespace {

// Rows per share: at least kValuesPerShare values (parallel.hpp).
std::size_t row_grain(std::size_t classes) { return std::max<std::size_t>(1, kValuesPerShare / std::max<std::size_t>(1, classes)); }

// The max and the sum of a row of n values. Eight partial results side by side let
// the compiler vectorize the loop (it keeps one running value's order otherwise).
constexpr std::size_t kLanes = 8;

template <class T>
T row_max(const T* x, std::size_t n) {
  T part[kLanes];
  std::fill(part, part + kLanes, -std::numeric_limits<T>::infinity());
  std::size_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (std::size_t k = 0; k < kLanes; ++k) part[k] = x[c + k] > part[k] ? x[c + k] : part[k];
  T m = *std::max_element(part, part + kLanes);
  for (; c < n; ++c) m = std::max(m, x[c]);
  return m;
}

template <class T>
T row_sum(const T* x, std::size_t n) {
  T part[kLanes] = {};
  std::size_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (std::size_t k = 0; k < kLanes; ++k) part[k] += x[c + k];
  T s = 0;
  for (std::size_t k = 0; k < kLanes; ++k) s += part[k];
  for (; c < n; ++c) s += x[c];
  return s;
}

template <class T>
Tensor cross_entropy_(const Tensor& logits, const std::int64_t* targets, long ignore_index, double smoothing) {
  const xt::xarray<T>& x = logits.data<T>();
  const Shape shape = logits.shape();
  const std::size_t C = shape.back(), N = C ? x.size() / C : 0;
  const T spread = static_cast<T>(smoothing / static_cast<double>(C)), hit = static_cast<T>(1.0 - smoothing);
  std::vector<T> lse(N);  // log sum_c exp(x_ic), for the backward
  xt::xarray<T> loss = xt::xarray<T>::from_shape(Shape(shape.begin(), shape.end() - 1));  // [...]
  parallel_for(N, row_grain(C), [&](std::size_t begin, std::size_t end) {
    std::vector<T> e(C);  // one row's exp(x - max)
    for (std::size_t i = begin; i < end; ++i) {
      const T* row = x.data() + i * C;
      T m = row_max(row, C);
      if (!std::isfinite(m)) m = T(0);  // a row of -inf would give x - m = NaN
      for (std::size_t c = 0; c < C; ++c) e[c] = row[c] - m;
      vecmath::exp(e.data(), e.data(), C);
      lse[i] = m + std::log(row_sum(e.data(), C));
      const T total = spread == T(0) ? T(0) : row_sum(row, C);  // sum_c x_ic, for the smoothing
      const std::int64_t t = targets[i];
      loss.flat(i) = t == ignore_index ? T(0) : lse[i] - spread * total - hit * row[t];  // w_i lse_i - sum_c q_ic x_ic
    }
  });
  std::vector<std::int64_t> kept(targets, targets + N);
  return record<T>("cross_entropy", std::move(loss), {logits},
                   [C, N, spread, hit, ignore_index, lse = std::move(lse), kept = std::move(kept)](Node<T>& out) {
    const T* X = out.input(0).value.data();
    const T* G = out.grad.data();  // [N]
    xt::xarray<T> dx = xt::xarray<T>::from_shape(out.input(0).value.shape());  // [..., C]
    parallel_for(N, row_grain(C), [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        T* d = dx.data() + i * C;
        const std::int64_t t = kept[i];
        if (t == ignore_index) {  // q_i = 0, w_i = 0
          std::fill(d, d + C, T(0));
          continue;
        }
        const T* row = X + i * C;
        for (std::size_t c = 0; c < C; ++c) d[c] = row[c] - lse[i];
        vecmath::exp(d, d, C);                                      // p_ic
        const T g = G[i];
        for (std::size_t c = 0; c < C; ++c) d[c] = g * (d[c] - spread);  // g (p_ic - s / C)
        d[t] -= g * hit;                                            // - g (1 - s) at the target
      }
    });
    out.add_to_input_grad(0, std::move(dx));
  });
}

}  // namespace

// Targets checked by nn::cross_entropy (in range, or ignore_index).
Tensor fused::cross_entropy(const Tensor& logits, const std::int64_t* targets, long ignore_index,
                            double label_smoothing) {
  return ATTN_DISPATCH(logits.dtype(), cross_entropy_, logits, targets, ignore_index, label_smoothing);
}

}  // namespace attn
