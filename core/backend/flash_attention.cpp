// Attention in linear memory (FlashAttention-2's algorithm, on the CPU), as one fused op.
// nn::flash_attention (nn/attention/flash_attention.hpp) calls it, and runs its composed
// version, built from core ops block by block, when fused ops are off; docs/ops/flash_attention.md
// derives both.
//
//   o_i = sum_j softmax_j(s_ij) v_j,   s_ij = q_i . k_j / sqrt(D)   (blocked keys left out)
//
// Forward, for each block of queries: walk the blocks of keys, keeping per query a running
// max m, a running sum l of exp(s - m), and an accumulator acc of exp(s - m) v. When a block
// raises the max from m to m', everything so far is rescaled by exp(m - m'):
//   l <- exp(m - m') l + sum_j exp(s_ij - m'),   acc <- exp(m - m') acc + sum_j exp(s_ij - m') v_j
// At the end o_i = acc / l, and the only other thing kept is lse_i = m + log l.
//
// Backward, with dO = dL/do, recomputes each block's weights from lse, p_ij = exp(s_ij - lse_i):
//   dv_j = sum_i p_ij do_i                      dp_ij = do_i . v_j
//   ds_ij = p_ij (dp_ij - delta_i), delta_i = do_i . o_i   (softmax backward: delta_i = sum_j p_ij dp_ij)
//   dq_i = sum_j ds_ij k_j / sqrt(D)            dk_j = sum_i ds_ij q_i / sqrt(D)
// in two passes: one per block of keys (dk, dv: each block's sum is its own), one per block of
// queries (dq). Each pass recomputes p, so no [Tq, Tk] array ever exists, in forward or
// backward: the extra memory is O(Tq + Tk) per slice, plus one block per thread. The second
// pass costs two more products than one pass with shared dq accumulation would; in return
// every output element is summed by one thread in one fixed order, with no atomic additions,
// however the blocks are dealt to threads.
//
// Grouped queries (k and v with fewer slices than q) read their group's one key-value slice, and its
// dk, dv sum over the group's query slices. A window or the causal mask skips whole blocks.
#include "flash_attention.hpp"

#include "../record.hpp"
#include "blas.hpp"
#include "parallel.hpp"
#include "vecmath.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace attn {

namespace {

// Whether query i of slice n may not see key j (FlashMasks, fused.hpp).
struct Blocked {
  const bool* key_padding;  // [N / heads, Tk], or null
  std::size_t heads;
  const bool* attn_mask;    // [Tq, Tk], or null
  bool causal;
  std::size_t window;       // 0: none; else key j is blocked for query i when |i - j| >= window
  std::size_t Tq, Tk;

  static std::size_t distance(std::size_t i, std::size_t j) { return i >= j ? i - j : j - i; }
  bool operator()(std::size_t n, std::size_t i, std::size_t j) const {
    return (causal && j > i) || (window && distance(i, j) >= window) ||
           (key_padding && key_padding[(n / heads) * Tk + j]) || (attn_mask && attn_mask[i * Tk + j]);
  }
  // The keys that queries i0 .. i_end-1 may see lie in [key_begin(i0), key_end(i_end)): the causal
  // mask and the window block the rest whole, so their blocks are skipped.
  std::size_t key_begin(std::size_t i0) const { return window && i0 + 1 > window ? i0 + 1 - window : 0; }
  std::size_t key_end(std::size_t i_end) const {
    std::size_t end = Tk;
    if (causal) end = std::min(end, i_end);
    if (window) end = std::min(end, i_end - 1 + window);
    return end;
  }
  // The same from the keys' side: queries that may see keys j0 .. j_end-1 lie in
  // [query_begin(j0), query_end(j_end)).
  std::size_t query_begin(std::size_t j0) const {
    std::size_t begin = causal ? j0 : 0;
    if (window && j0 + 1 > window) begin = std::max(begin, j0 + 1 - window);
    return begin;
  }
  std::size_t query_end(std::size_t j_end) const { return window ? std::min(Tq, j_end - 1 + window) : Tq; }
  // Whether no key of the block can be blocked (no mask to apply): no padding or attn_mask, and
  // every pair of the block inside the causal limit and the window.
  bool block_free(std::size_t i0, std::size_t bq, std::size_t j0, std::size_t bk) const {
    if (key_padding || attn_mask) return false;
    if (causal && j0 + bk > i0 + 1) return false;  // the block's last key j0+bk-1 after its first query i0
    if (window && std::max(distance(i0 + bq - 1, j0), distance(i0, j0 + bk - 1)) >= window) return false;
    return true;
  }
};

// A mask with no values (Mask() holds one), for a copy that is not needed.
Mask empty_mask() { return Mask::from_shape({std::size_t(0)}); }

// The item-th of `count` blocks in the order 0, count-1, 1, count-2, ...: under a causal mask a
// block's work grows (or shrinks) with its index, and each thread's run of consecutive items then
// gets about the same work as another's. Which thread takes a block does not change its result.
std::size_t balanced(std::size_t item, std::size_t count) { return item % 2 ? count - 1 - item / 2 : item / 2; }

// s = q_i k_j^T / sqrt(D) for queries i0 .. i0+bq-1 and keys j0 .. j0+bk-1 of slice n, with
// -inf where blocked. Q [Tq, D] and K [Tk, D] are the slice's; s is [bq, bk].
template <class T>
void block_scores(const T* Q, const T* K, std::size_t D, std::size_t n, std::size_t i0, std::size_t bq,
                  std::size_t j0, std::size_t bk, T scale, const Blocked& blocked, T* s) {
  // [bq, D] x [D, bk] -> [bq, bk]
  blas::gemm(false, true, bq, bk, D, scale, Q + i0 * D, D, K + j0 * D, D, T(0), s, bk);
  if (blocked.block_free(i0, bq, j0, bk)) return;
  for (std::size_t r = 0; r < bq; ++r)
    for (std::size_t c = 0; c < bk; ++c)
      if (blocked(n, i0 + r, j0 + c)) s[r * bk + c] = -std::numeric_limits<T>::infinity();
}

// p = exp(s - lse) in place, row by row: the block's softmax weights, recomputed (0 on a row
// whose every key is blocked, lse = -inf).
template <class T>
void block_weights(T* s, std::size_t bq, std::size_t bk, const T* lse) {
  for (std::size_t r = 0; r < bq; ++r) {
    T* row = s + r * bk;
    if (lse[r] == -std::numeric_limits<T>::infinity()) {
      std::fill(row, row + bk, T(0));
      continue;
    }
    for (std::size_t c = 0; c < bk; ++c) row[c] -= lse[r];
    vecmath::exp(row, row, bk);  // exp(-inf) = 0 on blocked keys
  }
}

// ds = p * (dp - delta) in place of dp: [bq, bk]
template <class T>
void block_score_grads(const T* p, T* dp, std::size_t bq, std::size_t bk, const T* delta) {
  for (std::size_t r = 0; r < bq; ++r)
    for (std::size_t c = 0; c < bk; ++c) dp[r * bk + c] = p[r * bk + c] * (dp[r * bk + c] - delta[r]);
}

// One slice's inputs to the backward pass (row pointers at the slice's first query or key).
template <class T>
struct SliceGrads {
  const T* Q;      // [Tq, D]
  const T* K;      // [Tk, D]
  const T* V;      // [Tk, Dv]
  const T* dO;     // [Tq, Dv]
  const T* lse;    // [Tq]
  const T* delta;  // [Tq]
  std::size_t D, Dv, n;
};

// For queries i0 .. i0+bq-1 and keys j0 .. j0+bk-1: the weights p, recomputed from lse, and the
// score gradients ds = p * (do v^T - delta), both [bq, bk]. Both backward passes start from these.
template <class T>
void block_backward(const SliceGrads<T>& g, std::size_t i0, std::size_t bq, std::size_t j0, std::size_t bk, T scale,
                    const Blocked& blocked, T* p, T* ds) {
  block_scores(g.Q, g.K, g.D, g.n, i0, bq, j0, bk, scale, blocked, p);
  block_weights(p, bq, bk, g.lse + i0);  // p [bq, bk]
  // dp = do_i v_j^T:   [bq, Dv] x [Dv, bk] -> [bq, bk]
  blas::gemm(false, true, bq, bk, g.Dv, T(1), g.dO + i0 * g.Dv, g.Dv, g.V + j0 * g.Dv, g.Dv, T(0), ds, bk);
  block_score_grads(p, ds, bq, bk, g.delta + i0);  // ds [bq, bk]
}

template <class T>
Tensor flash_attention_(const Tensor& q, const Tensor& k, const Tensor& v, const FlashMasks& masks,
                        std::size_t window, std::size_t block_q, std::size_t block_k) {
  const std::size_t N = q.size(0), Tq = q.size(1), Tk = k.size(1), D = q.size(2), Dv = v.size(2);
  const std::size_t N_kv = k.size(0), group = N_kv ? N / N_kv : 1;  // query slice n reads key-value slice n / group
  const T scale = T(1) / std::sqrt(T(D));
  // Forward reads the caller's masks; backward, which recomputes the blocks from them, reads copies
  // (made only when a graph is recorded: an attn_mask's Tq * Tk bytes, key padding's N / heads * Tk).
  const bool has_key_padding = masks.key_padding != nullptr, has_attn_mask = masks.attn_mask != nullptr;
  const std::size_t heads = masks.heads;
  const bool causal = masks.causal;
  const Blocked blocked{has_key_padding ? masks.key_padding->data() : nullptr, heads,
                        has_attn_mask ? masks.attn_mask->data() : nullptr, causal, window, Tq, Tk};
  const bool recording = is_grad_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad());
  Mask key_padding = recording && has_key_padding ? *masks.key_padding : empty_mask();
  Mask attn_mask = recording && has_attn_mask ? *masks.attn_mask : empty_mask();
  auto blocked_of = [=](const Mask& kp, const Mask& am) {
    return Blocked{has_key_padding ? kp.data() : nullptr, heads, has_attn_mask ? am.data() : nullptr, causal, window,
                   Tq, Tk};
  };
  const std::size_t q_blocks = (Tq + block_q - 1) / block_q, k_blocks = (Tk + block_k - 1) / block_k;

  const T* Q = q.data<T>().data();  // [N, Tq, D]
  const T* K = k.data<T>().data();  // [N_kv, Tk, D]
  const T* V = v.data<T>().data();  // [N_kv, Tk, Dv]
  xt::xarray<T> o = xt::xarray<T>::from_shape({N, Tq, Dv});
  xt::xarray<T> lse = xt::xarray<T>::from_shape({N, Tq});
  // One item per (slice, block of queries); each writes only its own rows of o and lse.
  parallel_for(N * q_blocks, 1, [&](std::size_t a, std::size_t b) {
    std::vector<T> s(block_q * block_k), m(block_q), l(block_q), acc(block_q * Dv);
    for (std::size_t item = a; item < b; ++item) {
      const std::size_t n = item / q_blocks, i0 = balanced(item % q_blocks, q_blocks) * block_q;
      const std::size_t bq = std::min(block_q, Tq - i0);
      const T* Qn = Q + n * Tq * D;
      const T* Kn = K + (n / group) * Tk * D;
      const T* Vn = V + (n / group) * Tk * Dv;
      std::fill(m.begin(), m.end(), -std::numeric_limits<T>::infinity());
      std::fill(l.begin(), l.end(), T(0));
      std::fill(acc.begin(), acc.end(), T(0));
      const std::size_t first = blocked.key_begin(i0) / block_k * block_k;
      for (std::size_t j0 = first; j0 < blocked.key_end(i0 + bq); j0 += block_k) {
        const std::size_t bk = std::min(block_k, Tk - j0);
        block_scores(Qn, Kn, D, n, i0, bq, j0, bk, scale, blocked, s.data());  // [bq, bk]
        for (std::size_t r = 0; r < bq; ++r) {
          T* row = s.data() + r * bk;
          const T m_new = std::max(m[r], *std::max_element(row, row + bk));
          if (m_new == -std::numeric_limits<T>::infinity()) {  // every key so far blocked: nothing to add
            std::fill(row, row + bk, T(0));
            continue;
          }
          const T alpha = std::exp(m[r] - m_new);  // exp(m - m'), 0 on the first keys seen
          for (std::size_t c = 0; c < bk; ++c) row[c] -= m_new;
          vecmath::exp(row, row, bk);  // exp(s - m'), 0 where blocked
          T sum = 0;
          for (std::size_t c = 0; c < bk; ++c) sum += row[c];
          l[r] = alpha * l[r] + sum;
          for (std::size_t d = 0; d < Dv; ++d) acc[r * Dv + d] *= alpha;
          m[r] = m_new;
        }
        // acc += exp(s - m') v_j:   [bq, bk] x [bk, Dv] -> [bq, Dv]
        blas::gemm(false, false, bq, Dv, bk, T(1), s.data(), bk, Vn + j0 * Dv, Dv, T(1), acc.data(), Dv);
      }
      for (std::size_t r = 0; r < bq; ++r) {
        T* out = o.data() + (n * Tq + i0 + r) * Dv;
        const bool empty = l[r] == T(0);  // every key blocked: output 0, as masked_softmax
        for (std::size_t d = 0; d < Dv; ++d) out[d] = empty ? T(0) : acc[r * Dv + d] / l[r];
        lse(n, i0 + r) = empty ? -std::numeric_limits<T>::infinity() : m[r] + std::log(l[r]);
      }
    }
  });

  return record<T>("flash_attention", std::move(o), {q, k, v},
                   [lse = std::move(lse), key_padding = std::move(key_padding), attn_mask = std::move(attn_mask),
                    blocked_of, N, N_kv, group, Tq, Tk, D, Dv, scale, block_q, block_k, q_blocks,
                    k_blocks](Node<T>& out) {
    const Blocked blocked = blocked_of(key_padding, attn_mask);  // pointing into this closure's copies
    const T* Q = out.input(0).value.data();  // [N, Tq, D]
    const T* K = out.input(1).value.data();  // [N_kv, Tk, D]
    const T* V = out.input(2).value.data();  // [N_kv, Tk, Dv]
    const T* O = out.value.data();           // [N, Tq, Dv]
    const T* dO = out.grad.data();           // [N, Tq, Dv]
    const T* LSE = lse.data();               // [N, Tq]
    // delta_i = do_i . o_i: [N, Tq]
    std::vector<T> delta(N * Tq);
    for (std::size_t i = 0; i < N * Tq; ++i) {
      T sum = 0;
      for (std::size_t d = 0; d < Dv; ++d) sum += dO[i * Dv + d] * O[i * Dv + d];
      delta[i] = sum;
    }
    auto slice = [&](std::size_t n) {
      return SliceGrads<T>{Q + n * Tq * D, K + (n / group) * Tk * D, V + (n / group) * Tk * Dv, dO + n * Tq * Dv,
                           LSE + n * Tq, delta.data() + n * Tq, D, Dv, n};
    };

    // Pass 1, per (key-value slice, block of keys): dk_j and dv_j, summed over every query block
    // of every query slice of its group that sees it.
    if (out.input_requires_grad(1) || out.input_requires_grad(2)) {
      xt::xarray<T> dk = xt::xarray<T>::from_shape({N_kv, Tk, D});
      xt::xarray<T> dv = xt::xarray<T>::from_shape({N_kv, Tk, Dv});
      parallel_for(N_kv * k_blocks, 1, [&](std::size_t a, std::size_t b) {
        std::vector<T> p(block_q * block_k), ds(block_q * block_k);
        for (std::size_t item = a; item < b; ++item) {
          const std::size_t m = item / k_blocks, j0 = balanced(item % k_blocks, k_blocks) * block_k;
          const std::size_t bk = std::min(block_k, Tk - j0);
          T* dkj = dk.data() + (m * Tk + j0) * D;    // [bk, D]
          T* dvj = dv.data() + (m * Tk + j0) * Dv;   // [bk, Dv]
          std::fill(dkj, dkj + bk * D, T(0));
          std::fill(dvj, dvj + bk * Dv, T(0));
          const std::size_t first = blocked.query_begin(j0) / block_q * block_q, end = blocked.query_end(j0 + bk);
          for (std::size_t n = m * group; n < (m + 1) * group; ++n) {  // the query slices reading slice m
            const SliceGrads<T> g = slice(n);
            for (std::size_t i0 = first; i0 < end; i0 += block_q) {
              const std::size_t bq = std::min(block_q, Tq - i0);
              block_backward(g, i0, bq, j0, bk, scale, blocked, p.data(), ds.data());
              // dv_j += p^T do_i:   [bk, bq] x [bq, Dv] -> [bk, Dv]
              blas::gemm(true, false, bk, Dv, bq, T(1), p.data(), bk, g.dO + i0 * Dv, Dv, T(1), dvj, Dv);
              // dk_j += ds^T q_i / sqrt(D):   [bk, bq] x [bq, D] -> [bk, D]
              blas::gemm(true, false, bk, D, bq, scale, ds.data(), bk, g.Q + i0 * D, D, T(1), dkj, D);
            }
          }
        }
      });
      out.add_to_input_grad(1, std::move(dk));
      out.add_to_input_grad(2, std::move(dv));
    }

    // Pass 2, per (slice, block of queries): dq_i, summed over every key block it sees.
    if (out.input_requires_grad(0)) {
      xt::xarray<T> dq = xt::xarray<T>::from_shape({N, Tq, D});
      parallel_for(N * q_blocks, 1, [&](std::size_t a, std::size_t b) {
        std::vector<T> p(block_q * block_k), ds(block_q * block_k);
        for (std::size_t item = a; item < b; ++item) {
          const std::size_t n = item / q_blocks, i0 = balanced(item % q_blocks, q_blocks) * block_q;
          const std::size_t bq = std::min(block_q, Tq - i0);
          const SliceGrads<T> g = slice(n);
          T* dqi = dq.data() + (n * Tq + i0) * D;  // [bq, D]
          std::fill(dqi, dqi + bq * D, T(0));
          const std::size_t first = blocked.key_begin(i0) / block_k * block_k;
          for (std::size_t j0 = first; j0 < blocked.key_end(i0 + bq); j0 += block_k) {
            const std::size_t bk = std::min(block_k, Tk - j0);
            block_backward(g, i0, bq, j0, bk, scale, blocked, p.data(), ds.data());
            // dq_i += ds k_j / sqrt(D):   [bq, bk] x [bk, D] -> [bq, D]
            blas::gemm(false, false, bq, D, bk, scale, ds.data(), bk, g.K + j0 * D, D, T(1), dqi, D);
          }
        }
      });
      out.add_to_input_grad(0, std::move(dq));
    }
  });
}

}  // namespace

Tensor flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, const FlashMasks& masks,
                       std::size_t block_q, std::size_t block_k) {
  return flash_attention(q, k, v, masks, /*window=*/0, block_q, block_k);
}

Tensor flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, const FlashMasks& masks,
                       std::size_t window, std::size_t block_q, std::size_t block_k) {
  check_inputs("flash_attention", {&q, &k, &v});
  const Shape sq = q.shape(), sk = k.shape(), sv = v.shape();
  if (sq.size() != 3 || sk.size() != 3 || sv.size() != 3 || (sk[0] == 0 ? sq[0] != 0 : sq[0] % sk[0] != 0) || sv[0] != sk[0] ||
      sk[2] != sq[2] || sv[1] != sk[1] || sq[2] == 0)
    throw ShapeError("flash_attention: expected q [N, Tq, D], k [N_kv, Tk, D] and v [N_kv, Tk, Dv] with N_kv "
                     "dividing N and D > 0, got q " + shape_str(sq) + ", k " + shape_str(sk) + " and v " +
                     shape_str(sv));
  if (block_q == 0 || block_k == 0)
    throw ValueError("flash_attention: block sizes must be positive, got block_q " + std::to_string(block_q) +
                     " and block_k " + std::to_string(block_k));
  const std::size_t N = sq[0], Tq = sq[1], Tk = sk[1];
  if (masks.heads == 0 || N % masks.heads != 0)
    throw ValueError("flash_attention: heads (" + std::to_string(masks.heads) + ") must divide N (" +
                     std::to_string(N) + ")");
  if (masks.key_padding) {
    const Shape got(masks.key_padding->shape().begin(), masks.key_padding->shape().end());
    if (got != Shape{N / masks.heads, Tk})
      throw ShapeError("flash_attention: expected key_padding [N / heads, Tk] = " +
                       shape_str({N / masks.heads, Tk}) + ", got " + shape_str(got));
  }
  if (masks.attn_mask) {
    const Shape got(masks.attn_mask->shape().begin(), masks.attn_mask->shape().end());
    if (got != Shape{Tq, Tk})
      throw ShapeError("flash_attention: expected attn_mask [Tq, Tk] = " + shape_str({Tq, Tk}) + ", got " +
                       shape_str(got));
  }
  return ATTN_DISPATCH(q.dtype(), flash_attention_, q, k, v, masks, window, block_q, block_k);
}

}  // namespace attn
