// Loss functions, as torch.nn.functional.cross_entropy, nll_loss and mse_loss.
//
//   Tensor loss = attn::nn::cross_entropy(logits, targets);  // logits [N, C], targets [N]
//   loss.backward();
//
// Class scores sit in the LAST dim: logits [..., C] with targets [...] of class
// ids. For [N, C] that is PyTorch's layout; for a sequence, [B, T, C] logits go
// with [B, T] targets directly (PyTorch would need logits.view(-1, C) and
// targets.view(-1), which gives the same numbers).
#pragma once

#include "../core/tensor.hpp"

namespace attn::nn {

// How the per-element losses are combined: kept as they are (None, shaped like
// the targets), averaged (Mean) or added up (Sum).
enum class Reduction { None, Mean, Sum };

// -log softmax(logits)[target], averaged over the targets that are not
// ignore_index (Mean), so padding never counts. With label_smoothing = s the
// target distribution is (1 - s) on the target class plus s / C on every class:
//   loss_i = (1 - s) * (-log p_i[t_i]) + (s / C) * sum_c (-log p_i[c]).
// An ignored target gives 0 (None) and is left out of sum and count (Mean).
// If every target is ignored, Mean gives NaN, as PyTorch.
Tensor cross_entropy(const Tensor& logits, const Index& targets, long ignore_index = -100,
                     double label_smoothing = 0.0, Reduction reduction = Reduction::Mean);

// -log_probs[target] with the same shapes and rules, for inputs that already
// are log-probabilities (cross_entropy = nll_loss(log_softmax(logits))).
Tensor nll_loss(const Tensor& log_probs, const Index& targets, long ignore_index = -100,
                Reduction reduction = Reduction::Mean);

// (input - target)^2, elementwise; the shapes must be equal.
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);

}  // namespace attn::nn
