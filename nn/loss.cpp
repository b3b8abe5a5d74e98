#include "loss.hpp"

#include "../core/kernels.hpp"
#include "../core/ops.hpp"
#include "../core/record.hpp"

namespace attn::nn {

namespace {

// Checks that targets has the shape of scores without the class dim:
// scores [..., C] go with targets [...]. Where the shapes fit PyTorch's class
// dim 1 instead ([N, C, d1, ...] with [N, d1, ...]) the message says what to write.
void check_targets(const char* op, const Tensor& scores, const Index& targets) {
  if (!scores.defined()) throw ValueError(std::string(op) + ": the input tensor is undefined");
  const Shape shape = scores.shape();
  const Shape target_shape(targets.shape().begin(), targets.shape().end());
  if (!shape.empty() && Shape(shape.begin(), shape.end() - 1) == target_shape) return;
  std::string message = std::string(op) + ": expected input [..., C] and targets [...] (the input's shape without its " +
                        "last, class dim), got input " + shape_str(shape) + " and targets " + shape_str(target_shape);
  Shape without_dim1 = shape;
  if (shape.size() >= 3) without_dim1.erase(without_dim1.begin() + 1);
  if (shape.size() >= 3 && without_dim1 == target_shape && std::string(op) == "cross_entropy")
    message += ". That is PyTorch's layout, class dim 1 (input [N, C, d1, ...], targets [N, d1, ...]): write "
               "nn::cross_entropy(logits, targets, nn::CrossEntropyOptions().class_dim(1)), or give logits [N, d1, ..., C]";
  else
    message += " (PyTorch's layout, input [N, C, d1, ...] with targets [N, d1, ...], needs "
               "nn::CrossEntropyOptions().class_dim(1))";
  throw ShapeError(message);
}

// Throws unless every target is in [0, C) or ignore_index; returns how many are not ignored.
std::size_t count_targets(const char* op, std::size_t num_classes, const Index& targets, long ignore_index) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const std::int64_t t = targets.flat(i);
    if (t == ignore_index) continue;
    if (t < 0 || t >= static_cast<std::int64_t>(num_classes))
      throw ValueError(std::string(op) + ": target " + std::to_string(t) + " is out of range for " +
                       std::to_string(num_classes) + " classes (ignore_index is " + std::to_string(ignore_index) + ")");
    ++count;
  }
  return count;
}

// The target distribution q, shaped like the scores [..., C], as a constant:
//   q[c] = (1 - s) * (c == t) + s / C  for a target t, with s the label smoothing,
//   q[c] = 0                           where t == ignore_index.
// Then -sum_c q[c] * log p[c] is the loss of one target. `count` gets the
// number of targets that are not ignored.
Tensor target_distribution(const char* op, const Tensor& scores, const Index& targets, long ignore_index,
                           double smoothing, std::size_t& count) {
  const Shape shape = scores.shape();
  const std::size_t num_classes = shape.back();
  count = count_targets(op, num_classes, targets, ignore_index);
  xt::xarray<double> q = xt::zeros<double>(shape);
  for (std::size_t i = 0; i < targets.size(); ++i) {  // row i of q is q.flat(i * C ... i * C + C - 1)
    const std::int64_t t = targets.flat(i);
    if (t == ignore_index) continue;
    for (std::size_t c = 0; c < num_classes; ++c) q.flat(i * num_classes + c) = smoothing / num_classes;
    q.flat(i * num_classes + static_cast<std::size_t>(t)) += 1.0 - smoothing;
  }
  return tensor(q, false, scores.dtype());
}

// Combines the per-target losses; Mean divides by the targets that count.
Tensor reduce(const Tensor& losses, std::size_t count, Reduction reduction) {
  switch (reduction) {
    case Reduction::None: return losses;
    case Reduction::Sum: return sum(losses);
    case Reduction::Mean: return sum(losses) / static_cast<double>(count);  // NaN if count is 0, as PyTorch
  }
  return losses;
}

}  // namespace

Tensor cross_entropy(const Tensor& logits, const Index& targets, long ignore_index, double label_smoothing,
                     Reduction reduction) {
  check_targets("cross_entropy", logits, targets);
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0))
    throw ValueError("cross_entropy: label_smoothing must be between 0 and 1, got " + std::to_string(label_smoothing));
  if (fused_ops_enabled()) {  // one op, no [..., C] arrays but the gradient (core/backend/cross_entropy.cpp)
    const std::size_t count = count_targets("cross_entropy", logits.shape().back(), targets, ignore_index);
    // targets [...] is row-major and contiguous (an xt::xarray): target i goes with row i of logits
    return reduce(fused::cross_entropy(logits, targets.data(), ignore_index, label_smoothing), count, reduction);
  }
  std::size_t count = 0;
  Tensor q = target_distribution("cross_entropy", logits, targets, ignore_index, label_smoothing, count);
  Tensor log_p = log_softmax(logits, -1);     // [..., C]
  Tensor losses = -sum(q * log_p, {-1});      // [...]: -sum_c q[c] log p[c]
  return reduce(losses, count, reduction);
}

Tensor cross_entropy(const Tensor& logits, const Index& targets, const CrossEntropyOptions& options) {
  if (!logits.defined()) throw ValueError("cross_entropy: the input tensor is undefined");
  const Shape shape = logits.shape();
  const long rank = static_cast<long>(shape.size());
  const long dim = options.class_dim() < 0 ? options.class_dim() + rank : options.class_dim();
  if (rank == 0 || dim < 0 || dim >= rank)
    throw ValueError("cross_entropy: class_dim " + std::to_string(options.class_dim()) + " is out of range for input " +
                     shape_str(shape));
  Tensor class_last = logits;
  if (dim != rank - 1) {
    Shape expected = shape;
    expected.erase(expected.begin() + dim);
    const Shape target_shape(targets.shape().begin(), targets.shape().end());
    if (expected != target_shape)
      throw ShapeError("cross_entropy: with class_dim " + std::to_string(options.class_dim()) +
                       " expected targets shaped like the input without that dim, " + shape_str(expected) +
                       ", got input " + shape_str(shape) + " and targets " + shape_str(target_shape));
    std::vector<long> order;  // every dim but the class dim, in order, then the class dim
    for (long d = 0; d < rank; ++d)
      if (d != dim) order.push_back(d);
    order.push_back(dim);
    class_last = permute(logits, order);  // [N, C, d1, ...] -> [N, d1, ..., C]
  }
  return cross_entropy(class_last, targets, options.ignore_index(), options.label_smoothing(), options.reduction());
}

Tensor nll_loss(const Tensor& log_probs, const Index& targets, long ignore_index, Reduction reduction) {
  check_targets("nll_loss", log_probs, targets);
  std::size_t count = 0;
  Tensor q = target_distribution("nll_loss", log_probs, targets, ignore_index, 0.0, count);
  Tensor losses = -sum(q * log_probs, {-1});  // [...]: -log_probs[target]
  return reduce(losses, count, reduction);
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_inputs("mse_loss", {&input, &target});
  if (input.shape() != target.shape())
    throw ShapeError("mse_loss: expected input and target of the same shape, got " + shape_str(input.shape()) +
                     " and " + shape_str(target.shape()));
  Tensor diff = input - target;
  Tensor losses = diff * diff;
  return reduce(losses, losses.numel(), reduction);
}

}  // namespace attn::nn
