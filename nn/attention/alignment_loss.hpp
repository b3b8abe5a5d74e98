// Losses on attention weights, for training attention to align (chapter 19).
//
// Supervised attention (Mi, Wang & Ittycheriah 2016, "Supervised attentions for neural
// machine translation"): where the gold source position g_t of target step t is known,
// the cross-entropy between the one-hot gold row and the weights,
//   L_sup = -(1/N) sum_{t: g_t >= 0} log a_{t,g_t}          N = number of such steps.
// (With a one-hot gold row, their "multiplication" distance -log sum_j a_tj gold_tj is
// the same number.)
//
// Agreement (Cohn et al. 2016, "Incorporating structural alignment biases into an
// attentional neural translation model"): two models trained together, x -> y and
// y -> x, rewarded when their weights agree, i.e. the trace of A_{x->y} A_{y->x}:
//   L_agree = -(1/sum_b |y_b|) sum_b sum_{t < |y_b|, j < |x_b|} a^{x->y}_{b,t,j} a^{y->x}_{b,j,t}
// Each trace is at most |y_b|, so L_agree lies in [-1, 0]. (Cohn et al. subtract the
// trace of each sentence as it is; dividing by the tokens keeps gamma's meaning the same
// for long and short batches.)
//
// Both losses train only weights that are still in the autograd graph:
// BahdanauSeq2Seq::last_attention() keeps them there; the other models' are detached.
//   Tensor loss = nn::cross_entropy(logits, batch.tgt_out, pad)
//               + 1.0 * nn::supervised_attention_loss(model.last_attention().at("attention"), batch.alignment);
#pragma once

#include "../../core/tensor.hpp"

#include <vector>

namespace attn::nn {

// attention [B, T, S] (rows a_t of every target step), alignment [B, T] of gold source
// positions, -1 where there is none (data::Batch::alignment). Returns a scalar; 0 when no
// step has a gold position. A gold weight of exactly 0 (a gold position on padding, or a
// float32 weight that underflowed) costs -log(1e-30), about 69, instead of infinity.
// ShapeError for shapes that do not fit (an empty alignment: the examples had none),
// ValueError for a gold position outside [0, S).
Tensor supervised_attention_loss(const Tensor& attention, const Index& alignment);

// forward [B, T, S]: the x -> y model's weights (its target y, its source x); backward
// [B, T2, S2]: the y -> x model's weights, for the same sentence pairs in the same rows.
// src_lengths |x_b| and tgt_lengths |y_b| count tokens only, without <eos> (so
// data::Batch::tgt_lengths minus 1). The <eos> rows of either model are left out. Returns a
// scalar (0 for an empty batch). ShapeError when a length does not fit.
Tensor agreement_loss(const Tensor& forward, const Tensor& backward, const std::vector<std::size_t>& src_lengths,
                      const std::vector<std::size_t>& tgt_lengths);

}  // namespace attn::nn
