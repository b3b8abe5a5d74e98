// Loss functions, as torch.nn.functional.cross_entropy, nll_loss and mse_loss.
//
//   Tensor loss = attn::nn::cross_entropy(logits, targets);  // logits [N, C], targets [N]
//   loss.backward();
//
// Class scores sit in the LAST dim: logits [..., C] with targets [...] of class
// ids. For [N, C] that is PyTorch's layout; for a sequence, [B, T, C] logits go
// with [B, T] targets directly (PyTorch would need logits.view(-1, C) and
// targets.view(-1), which gives the same numbers).
//
// PyTorch's K-dimensional layout, class dim 1 (logits [N, C, d1, ...] with
// targets [N, d1, ...]), is asked for explicitly, so that a 3-D input never
// changes meaning:
//   nn::cross_entropy(logits, targets, nn::CrossEntropyOptions().class_dim(1));  // [N, C, T], [N, T]
// Without it, logits [N, C, T] with targets [N, T] are read class-last, as
// [N, T', C'] with T' = C and C' = T: with C != T that is a ShapeError saying
// what to write; with C == T nothing can tell the layouts apart.
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

// cross_entropy's arguments by name, as libtorch's CrossEntropyFuncOptions:
//   nn::CrossEntropyOptions().class_dim(1).ignore_index(0).reduction(nn::Reduction::Sum)
// class_dim is where the C class scores sit in logits (-1: last, the course's
// layout; 1: PyTorch's); targets has logits' shape without that dim.
class CrossEntropyOptions {
 public:
  CrossEntropyOptions& class_dim(long dim) { class_dim_ = dim; return *this; }
  CrossEntropyOptions& ignore_index(long index) { ignore_index_ = index; return *this; }
  CrossEntropyOptions& label_smoothing(double s) { label_smoothing_ = s; return *this; }
  CrossEntropyOptions& reduction(Reduction r) { reduction_ = r; return *this; }
  long class_dim() const { return class_dim_; }
  long ignore_index() const { return ignore_index_; }
  double label_smoothing() const { return label_smoothing_; }
  Reduction reduction() const { return reduction_; }

 private:
  long class_dim_ = -1;
  long ignore_index_ = -100;
  double label_smoothing_ = 0.0;
  Reduction reduction_ = Reduction::Mean;
};
Tensor cross_entropy(const Tensor& logits, const Index& targets, const CrossEntropyOptions& options);

// -log_probs[target] with the same shapes and rules, for inputs that already
// are log-probabilities (cross_entropy = nll_loss(log_softmax(logits))).
Tensor nll_loss(const Tensor& log_probs, const Index& targets, long ignore_index = -100,
                Reduction reduction = Reduction::Mean);

// (input - target)^2, elementwise; the shapes must be equal.
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);

}  // namespace attn::nn
