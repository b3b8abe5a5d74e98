#include "flash_attention.hpp"

#include "masks.hpp"

#include "../../core/backend/flash_attention.hpp"
#include "../../core/ops.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace attn::nn {

namespace {

// Which keys j0 .. j0+bk-1 each query i0 .. i0+bq-1 may not see: [N, bq, bk] with a key
// padding mask (it differs per sequence), else [bq, bk]; nullopt when none is blocked.
std::optional<Mask> block_mask(const FlashMasks& masks, std::size_t window, std::size_t N, std::size_t i0,
                               std::size_t bq, std::size_t j0, std::size_t bk) {
  const std::size_t slices = masks.key_padding ? N : 1;
  Mask blocked = Mask::from_shape({slices, bq, bk});
  bool any = false;
  for (std::size_t n = 0; n < slices; ++n)
    for (std::size_t r = 0; r < bq; ++r)
      for (std::size_t c = 0; c < bk; ++c) {
        const std::size_t i = i0 + r, j = j0 + c;
        const bool far = window && (i >= j ? i - j : j - i) >= window;
        const bool b = (masks.causal && j > i) || far ||
                       (masks.key_padding && (*masks.key_padding)(n / masks.heads, j)) ||
                       (masks.attn_mask && (*masks.attn_mask)(i, j));
        blocked(n, r, c) = b;
        any = any || b;
      }
  if (!any) return std::nullopt;
  if (slices == 1) blocked.reshape({bq, bk});
  return blocked;
}

// The teaching version, from core ops: for each block of queries, the online softmax over the
// blocks of keys. Autograd differentiates it as it is, so each block's weights are kept for
// backward; the fused op recomputes them from the log-sum-exp instead.
Tensor composed(const Tensor& q, const Tensor& k, const Tensor& v, const FlashMasks& masks, std::size_t window,
                std::size_t block_q, std::size_t block_k) {
  const std::size_t N = q.size(0), Tq = q.size(1), Tk = k.size(1), D = q.size(2), Dv = v.size(2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  if (Tq == 0) return zeros({N, 0, Dv}, q.dtype());
  std::vector<Tensor> outputs;
  for (std::size_t i0 = 0; i0 < Tq; i0 += block_q) {
    const std::size_t bq = std::min(block_q, Tq - i0);
    Tensor qi = narrow(q, 1, i0, bq);                             // [N, bq, D]
    Tensor m = full({N, bq, 1}, kBlockedScore, q.dtype());        // running max of the scores (a constant)
    Tensor l = zeros({N, bq, 1}, q.dtype());                      // running sum of exp(s - m)
    Tensor acc = zeros({N, bq, Dv}, q.dtype());                   // running sum of exp(s - m) v
    // Keys outside [key_begin, key_end) are blocked for every query of the block (causal, window).
    std::size_t key_begin = 0, key_end = masks.causal ? std::min(Tk, i0 + bq) : Tk;
    if (window) {
      key_begin = i0 + 1 > window ? (i0 + 1 - window) / block_k * block_k : 0;
      key_end = std::min(key_end, i0 + bq - 1 + window);
    }
    for (std::size_t j0 = key_begin; j0 < key_end; j0 += block_k) {
      const std::size_t bk = std::min(block_k, Tk - j0);
      Tensor kj = narrow(k, 1, j0, bk);                           // [N, bk, D]
      Tensor vj = narrow(v, 1, j0, bk);                           // [N, bk, Dv]
      Tensor s = matmul(qi, transpose(kj, 1, 2)) * scale;         // [N, bq, D] x [N, D, bk] -> [N, bq, bk]
      const auto blocked = block_mask(masks, window, N, i0, bq, j0, bk);
      if (blocked) s = masked_fill(s, *blocked, kBlockedScore);
      // The new running max. The output does not depend on it (it cancels in acc / l), so it
      // is a constant for the gradient.
      Tensor block_max = max(s.detach(), -1, true);               // [N, bq, 1]
      Tensor m_new = attn::where(gt(block_max, m), block_max, m);       // [N, bq, 1]
      Tensor alpha = exp(m - m_new);                              // rescales the sums so far to the new max
      Tensor p = exp(s - m_new);                                  // [N, bq, bk]
      if (blocked) p = masked_fill(p, *blocked, 0.0);             // (they were exp(0) while m was the filler)
      l = l * alpha + sum(p, {-1}, true);                         // [N, bq, 1]
      acc = acc * alpha + matmul(p, vj);                          // [N, bq, bk] x [N, bk, Dv] -> [N, bq, Dv]
      m = m_new;
    }
    // A query that saw no key has l = 0 and acc = 0: dividing by 1 there gives its output 0.
    Tensor divisor = attn::where(eq(l.detach(), zeros_like(l)), ones_like(l), l);  // [N, bq, 1]
    outputs.push_back(acc / divisor);                                        // [N, bq, Dv]
  }
  return concat(outputs, 1);  // [N, Tq, Dv]
}

std::vector<long> as_longs(const Shape& shape) { return std::vector<long>(shape.begin(), shape.end()); }

}  // namespace

Tensor flash_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                       const std::optional<Mask>& key_padding_mask, const std::optional<Mask>& attn_mask,
                       bool is_causal, std::size_t block_q, std::size_t block_k, std::size_t window,
                       bool enable_gqa) {
  const std::string op = "flash_attention";
  if (!query.defined() || !key.defined() || !value.defined()) throw ValueError(op + ": an input is undefined");
  const Shape q = query.shape(), k = key.shape(), v = value.shape();
  const std::size_t n = q.size();
  // With enable_gqa the heads (dim -3) of key and value may divide query's; every other leading dim is shared.
  const bool grouped = enable_gqa && n >= 3 && k.size() == n && k[n - 3] != q[n - 3];
  auto same_leading = [&](const Shape& x) {
    for (std::size_t d = 0; d + 2 < n; ++d)
      if (x[d] != q[d] && !(grouped && d == n - 3)) return false;
    return true;
  };
  if (n < 2 || k.size() != n || v.size() != n || !same_leading(k) || !same_leading(v) || q.back() != k.back() ||
      k[n - 2] != v[n - 2] || q.back() == 0 ||
      (grouped && (k[n - 3] == 0 || q[n - 3] % k[n - 3] != 0 || v[n - 3] != k[n - 3])))
    throw ShapeError(op + ": expected query [..., Tq, D], key [..., Tk, D] and value [..., Tk, Dv] with the same "
                          "leading dims" + std::string(enable_gqa ? " (key and value's heads, dim -3, dividing "
                                                                    "query's)" : "") +
                     " and D > 0, got query " + shape_str(q) + ", key " + shape_str(k) + ", value " + shape_str(v) +
                     (!enable_gqa && n >= 3 && k.size() == n && k[n - 3] != q[n - 3]
                          ? std::string(" (fewer key-value heads than query heads need enable_gqa = true)")
                          : std::string()));
  if (block_q == 0 || block_k == 0)
    throw ValueError(op + ": block sizes must be positive, got block_q " + std::to_string(block_q) + " and block_k " +
                     std::to_string(block_k));
  const Shape leading(q.begin(), q.end() - 2);
  const std::size_t Tq = q[n - 2], Tk = k[n - 2], D = q.back(), Dv = v.back();
  std::size_t N = 1;
  for (std::size_t s : leading) N *= s;
  const std::size_t B = leading.empty() ? 1 : leading[0];
  if (key_padding_mask) {
    const Shape got(key_padding_mask->shape().begin(), key_padding_mask->shape().end());
    if (leading.empty() || got != Shape{B, Tk})
      throw ShapeError(op + ": expected key_padding_mask [B, Tk] with B the first of query's leading dims, got " +
                       shape_str(got) + " for query " + shape_str(q) + " and key " + shape_str(k));
  }
  if (attn_mask) {
    const Shape got(attn_mask->shape().begin(), attn_mask->shape().end());
    if (got != Shape{Tq, Tk})
      throw ShapeError(op + ": expected attn_mask [Tq, Tk] = " + shape_str({Tq, Tk}) + " (one for every sequence "
                            "and head; use scaled_dot_product_attention for others), got " + shape_str(got));
  }
  FlashMasks masks;
  masks.key_padding = key_padding_mask ? &*key_padding_mask : nullptr;
  masks.heads = B ? N / B : 1;  // slices per sequence: the heads of [B, H, T, d]
  masks.attn_mask = attn_mask ? &*attn_mask : nullptr;
  masks.causal = is_causal;

  const std::size_t group = grouped ? q[n - 3] / k[n - 3] : 1, N_kv = N / group;
  Tensor q3 = reshape(query, as_longs({N, Tq, D}));      // [..., Tq, D] -> [N, Tq, D]
  Tensor k3 = reshape(key, as_longs({N_kv, Tk, D}));     // [..., Tk, D] -> [N_kv, Tk, D]
  Tensor v3 = reshape(value, as_longs({N_kv, Tk, Dv}));  // [..., Tk, Dv] -> [N_kv, Tk, Dv]
  if (fused_ops_enabled()) {
    Tensor out = attn::flash_attention(q3, k3, v3, masks, window, block_q, block_k);  // [N, Tq, Dv], no copy per head
    Shape shape = leading;
    shape.push_back(Tq);
    shape.push_back(Dv);
    return reshape(out, as_longs(shape));  // [N, Tq, Dv] -> [..., Tq, Dv]
  }
  if (group > 1) {  // the teaching version gives each query head its own copy of its key-value head
    k3 = reshape(expand(unsqueeze(k3, 1), {N_kv, group, Tk, D}), as_longs({N, Tk, D}));     // [N, Tk, D]
    v3 = reshape(expand(unsqueeze(v3, 1), {N_kv, group, Tk, Dv}), as_longs({N, Tk, Dv}));  // [N, Tk, Dv]
  }
  Tensor out = composed(q3, k3, v3, masks, window, block_q, block_k);  // [N, Tq, Dv]
  Shape shape = leading;
  shape.push_back(Tq);
  shape.push_back(Dv);
  return reshape(out, as_longs(shape));  // [N, Tq, Dv] -> [..., Tq, Dv]
}

}  // namespace attn::nn
