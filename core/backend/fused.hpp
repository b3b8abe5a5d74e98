// The fused ops: each does in one op, with one pass over memory where it can,
// what a few core ops do composed. Each file names its composed version, which
// runs instead when fused ops are off (attn::set_fused_ops, core/kernels.hpp) and
// which its test checks it against, values and gradients (docs/ops/fused.md).
#pragma once

#include "../kernels.hpp"
#include "../tensor.hpp"

#include <cstdint>
#include <vector>

namespace attn {

// ---- masked softmax (softmax.cpp) ---------------------------------------------
// Fused: 0 where mask (broadcast to x) is true, a softmax over the rest, all 0 on a lane
// blocked entirely. nn::masked_softmax (nn/attention/masks.hpp) explains it, composed.
Tensor masked_softmax(const Tensor& x, const Mask& mask, long dim);

// ---- layer normalization (layer_norm.cpp) -----------------------------------
// Each row of the last dims `normalized_shape` to zero mean and unit variance,
// then * weight + bias (either may be undefined), as F.layer_norm. One fused op.
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);

// ---- the LSTM cell's pointwise step (lstm_cell.cpp) ---------------------------
// gates [B, 4H]: the pre-activations of gates i, f, g, o side by side (PyTorch's order).
Tensor lstm_cell_c(const Tensor& gates, const Tensor& c);      // c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
Tensor lstm_cell_h(const Tensor& gates, const Tensor& c_new);  // h' = sigmoid(o) * tanh(c')

// ---- an LSTM layer over a whole sequence (lstm_sequence.cpp) ------------------
// What nn::LSTM runs. Direction d starts from h0, c0 [B, H] and, at each time t
// (t = 0 .. T-1, or T-1 .. 0 when reverse), takes
//   gates = xw[t] + h W_hh^T  (xw [T, B, 4H]: x W_ih^T + b_ih + b_hh for every step)
// through lstm_cell_c and lstm_cell_h. Steps at or after lengths[b] are padding for
// sequence b: its state passes through unchanged and its output there is 0.
// Returns [T + 2, B, D * H]: rows 0 .. T-1 the outputs h of every step, direction d
// in columns d*H .. d*H + H-1; row T the final h, row T + 1 the final c.
// The directions run on separate threads at once.
struct LSTMDirection {
  Tensor xw;         // [T, B, 4H]
  Tensor h0, c0;     // [B, H]
  Tensor weight_hh;  // [4H, H]
  bool reverse = false;
};
Tensor lstm_sequence(const std::vector<LSTMDirection>& directions, const std::vector<std::int64_t>& lengths = {});

// ---- Bahdanau's additive score (additive_score.cpp) ------------------------
// e[b, i, j] = v . tanh(q[b, i] + k[b, j]) for q [B, Tq, A], k [B, Tk, A], v [A]: [B, Tq, Tk].
// Composed: matmul(tanh(unsqueeze(q, 2) + unsqueeze(k, 1)), v), in one pass instead of five.
Tensor additive_score(const Tensor& q, const Tensor& k, const Tensor& v);

// ---- attention in linear memory (flash_attention.cpp) --------------------------
// softmax(q k^T / sqrt(D)) v with blocked keys left out, for q [N, Tq, D], k [N_kv, Tk, D] and
// v [N_kv, Tk, Dv] -> [N, Tq, Dv], block_q queries by block_k keys at a time: no [Tq, Tk] array is
// made, forward or backward, which recomputes each block's weights from the row log-sum-exp
// (FlashAttention-2). Query slice n reads key-value slice n / (N / N_kv): with slices ordered as
// [B, H, ...] and [B, H_kv, ...], head h reads key-value head h / group (grouped-query attention),
// and no key or value is copied per head. Key j is blocked for query i of slice n when
//   key_padding (N / heads, Tk) is true at (n / heads, j)   (slices n = b * heads + h, as [B, H, ...])
//   attn_mask (Tq, Tk) is true at (i, j),   or causal and j > i
// (and, in the overload of flash_attention.hpp, outside a sliding window). Blocks that the causal
// mask blocks whole are skipped.
// A query with every key blocked gets output 0 and gradient 0, as masked_softmax.
// Composed, block by block from core ops: nn::flash_attention with fused ops off.
struct FlashMasks {
  const Mask* key_padding = nullptr;  // [N / heads, Tk]
  std::size_t heads = 1;
  const Mask* attn_mask = nullptr;    // [Tq, Tk]
  bool causal = false;
};
Tensor flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, const FlashMasks& masks,
                       std::size_t block_q, std::size_t block_k);

// ---- multi-head attention's rearrangements (heads.cpp) ---------------------------
// Multi-head attention's rearrangements, each one copy (reshape + transpose would be two):
Tensor split_heads(const Tensor& x, std::size_t num_heads);  // [B, T, H * d] -> [B, H, T, d]
Tensor merge_heads(const Tensor& x);                         // [B, H, T, d] -> [B, T, H * d]

}  // namespace attn
