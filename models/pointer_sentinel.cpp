#include "pointer_sentinel.hpp"

#include "../core/ops.hpp"
#include "../data/vocab.hpp"
#include "../nn/attention/masks.hpp"
#include "../nn/init.hpp"
#include "../nn/loss.hpp"

#include <cmath>

#include <xtensor/xview.hpp>

namespace attn::models {

namespace {

PointerSentinelConfig checked(const PointerSentinelConfig& c) {
  if (c.vocab < 1 || c.embed_dim < 1 || c.hidden_dim < 1 || (c.pointer && c.window < 1))
    throw ValueError("PointerSentinelLM: vocab, embed_dim, hidden_dim (and window, with the pointer) must be "
                     "positive, got vocab " + std::to_string(c.vocab) + ", embed_dim " + std::to_string(c.embed_dim) +
                     ", hidden_dim " + std::to_string(c.hidden_dim) + ", window " + std::to_string(c.window));
  return c;
}

std::string shape_of(const Index& x) { return shape_str(Shape(x.shape().begin(), x.shape().end())); }

void check_ids(const Index& ids, std::size_t vocab, const char* what) {
  for (std::int64_t id : ids)
    if (id < 0 || static_cast<std::size_t>(id) >= vocab)
      throw ValueError(std::string("PointerSentinelLM: ") + what + " holds id " + std::to_string(id) +
                       ", outside the vocabulary 0.." + std::to_string(vocab - 1));
}

// True where step t may not read position j: j after t, or at least L words back.
Mask window_mask(std::size_t T, std::size_t L) {
  Mask m(Shape{T, T});  // [T, T]
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t j = 0; j < T; ++j) m(t, j) = j > t || t - j >= L;
  return m;
}

}  // namespace

PointerSentinelLM::PointerSentinelLM(const PointerSentinelConfig& cfg)
    : Module("PointerSentinelLM"),
      config(checked(cfg)),
      embedding(config.vocab, config.embed_dim, /*padding_idx=*/0),
      lstm(config.embed_dim, config.hidden_dim, nn::batch_first()),
      out(config.hidden_dim, config.vocab),
      query(config.hidden_dim, config.hidden_dim) {
  register_module("embedding", embedding);
  register_module("lstm", lstm);
  register_module("out", out);
  if (config.pointer) {
    // Drawn after the plain model's layers, so that both models start from the same LSTM and softmax.
    register_module("query", query);
    sentinel = zeros({config.hidden_dim});
    register_parameter("sentinel", sentinel);
    const double bound = 1.0 / std::sqrt(static_cast<double>(config.hidden_dim));
    nn::init::uniform_(sentinel, -bound, bound);
  }
}

PointerSentinelLM::Parts PointerSentinelLM::run(const Index& inputs) {
  if (inputs.dimension() != 2 || inputs.shape()[0] < 1 || inputs.shape()[1] < 1)
    throw ShapeError("PointerSentinelLM: expected inputs [B, T] with B, T >= 1, got " + shape_of(inputs));
  check_ids(inputs, config.vocab, "inputs");
  const long B = static_cast<long>(inputs.shape()[0]), T = static_cast<long>(inputs.shape()[1]);
  const long H = static_cast<long>(config.hidden_dim);

  const Tensor h = lstm.forward(embedding.forward(inputs)).output;  // [B, T, H]
  Parts parts;
  parts.logits = out.forward(h);                                    // [B, T, V]
  if (!config.pointer) return parts;
  const Tensor q = tanh(query.forward(h));                                    // [B, T, H]
  const Tensor z = matmul(q, transpose(h, 1, 2));                             // [B, T, H] x [B, H, T] -> [B, T, T]
  const Tensor z_sentinel = matmul(q, reshape(sentinel, {H, 1}));            // [B, T, H] x [H, 1] -> [B, T, 1]
  // The window's mask gains a last column, the sentinel, that every step may read: no row is ever empty.
  Mask mask = xt::zeros<bool>({std::size_t(T), std::size_t(T + 1)});       // [T, T + 1]
  xt::view(mask, xt::all(), xt::range(0, T)) = window_mask(std::size_t(T), config.window);
  // Log weights, not weights: in float32 a weight can round to 0 where its log stays finite.
  parts.log_w = log_softmax(masked_fill(concat({z, z_sentinel}, -1), mask, nn::kBlockedScore), -1);  // [B, T, T + 1]
  return parts;
}

LanguageModelOutput PointerSentinelLM::forward(const Index& inputs, const Index& targets) {
  if (targets.shape() != inputs.shape())
    throw ShapeError("PointerSentinelLM: expected targets of the inputs' shape " + shape_of(inputs) + ", got " +
                     shape_of(targets));
  check_ids(targets, config.vocab, "targets");
  Parts parts = run(inputs);
  const std::size_t B = inputs.shape()[0], T = inputs.shape()[1];
  // log p_vocab(y_t), 0 at <pad> targets.
  const Tensor log_p_vocab = neg(nn::cross_entropy(parts.logits, targets, /*ignore_index=*/0, 0.0, nn::Reduction::None));  // [B, T]
  LanguageModelOutput o;
  if (!config.pointer) {
    o.log_prob = log_p_vocab;
    o.gate = ones({B, T}, log_p_vocab.dtype());
    o.pointer_mass = zeros({B, T}, log_p_vocab.dtype());
    o.log_gate_plus_mass = zeros({B, T}, log_p_vocab.dtype());
    return o;
  }
  // not_copy(b, t, j): slot j of step t does not hold y_t (j <= t; the window is in log_w already). The
  // sentinel's slot T is not a copy either; <pad> targets have no copies.
  Mask not_copy = xt::ones<bool>({B, T, T + 1});  // [B, T, T + 1]
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t)
      if (targets(b, t) != data::Vocab::pad_id)
        for (std::size_t j = 0; j <= t; ++j) not_copy(b, t, j) = inputs(b, j) != targets(b, t);
  const Tensor log_copies = masked_fill(parts.log_w, not_copy, nn::kBlockedScore);  // [B, T, T + 1]: log a_tj on copies
  const Tensor log_gate = narrow(parts.log_w, -1, T, 1);                           // [B, T, 1]
  // log p(y_t) = log(g_t p_vocab(y_t) + sum over copies of a_tj), as one logsumexp over T + 2 terms.
  const Tensor log_p = logsumexp(concat({add(log_gate, unsqueeze(log_p_vocab, -1)), log_copies}, -1), -1);  // [B, T]
  // log(g_t + sum over copies of a_tj): the slots that hold y_t, and the sentinel's.
  Mask copy_or_sentinel = not_copy;
  xt::view(copy_or_sentinel, xt::all(), xt::all(), T) = false;
  const Tensor log_g_mass = logsumexp(masked_fill(parts.log_w, copy_or_sentinel, nn::kBlockedScore), -1);  // [B, T]
  const Mask pad = xt::equal(targets, data::Vocab::pad_id);  // [B, T]
  o.log_prob = masked_fill(log_p, pad, 0.0);
  o.log_gate_plus_mass = masked_fill(log_g_mass, pad, 0.0);
  o.pointer = exp(narrow(parts.log_w, -1, 0, T));                   // [B, T, T]
  o.gate = reshape(exp(log_gate), {long(B), long(T)});              // [B, T, 1] -> [B, T]
  o.pointer_mass = sum(exp(narrow(log_copies, -1, 0, T)), {-1});    // [B, T, T] summed over j -> [B, T]
  return o;
}

Tensor PointerSentinelLM::loss(const LanguageModelOutput& o, const Index& targets) const {
  const Shape want(targets.shape().begin(), targets.shape().end());
  if (!o.log_prob.defined() || o.log_prob.shape() != want || !o.log_gate_plus_mass.defined() ||
      o.log_gate_plus_mass.shape() != want)
    throw ShapeError("PointerSentinelLM::loss: expected the output of forward() for targets " + shape_of(targets) +
                     ", got log_prob " + (o.log_prob.defined() ? shape_str(o.log_prob.shape()) : std::string("undefined")));
  std::size_t n = 0;
  for (std::int64_t y : targets) n += y != data::Vocab::pad_id;
  if (n == 0) throw ValueError("PointerSentinelLM::loss: every target is <pad>: nothing to predict");
  Tensor total = neg(sum(o.log_prob));
  // -log(g_t + mass_t): the pointer is rewarded for weight on copies of y_t or on the sentinel.
  if (config.pointer && config.pointer_loss) total = sub(total, sum(o.log_gate_plus_mass));
  return mul(total, 1.0 / static_cast<double>(n));
}

double PointerSentinelLM::nll_sum(const LanguageModelOutput& o, const Index& targets, std::size_t* count) {
  if (!o.log_prob.defined() || o.log_prob.shape() != Shape(targets.shape().begin(), targets.shape().end()))
    throw ShapeError("PointerSentinelLM::nll_sum: expected the output of forward() for targets " + shape_of(targets) +
                     ", got log_prob " + (o.log_prob.defined() ? shape_str(o.log_prob.shape()) : std::string("undefined")));
  const xt::xarray<double> lp = o.log_prob.to_array();
  double total = 0.0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < targets.size(); ++i)
    if (targets.flat(i) != data::Vocab::pad_id) {
      total -= lp.flat(i);
      ++n;
    }
  if (count) *count = n;
  return total;
}

Tensor PointerSentinelLM::next_word_probabilities(const Index& inputs) {
  Parts parts = run(inputs);
  const std::size_t T = inputs.shape()[1];
  const Tensor p_vocab = softmax(parts.logits, -1);  // [B, T, V]
  if (!config.pointer) return p_vocab;
  const Tensor w = exp(parts.log_w);                                                 // [B, T, T + 1]
  const Tensor words = one_hot(inputs, config.vocab, w.dtype());                     // [B, T, V]: row j is x_j
  // g_t p_vocab + sum_j a_tj onehot(x_j):  [B, T, 1] * [B, T, V]  +  [B, T, T] x [B, T, V] -> [B, T, V]
  return add(mul(narrow(w, -1, T, 1), p_vocab), matmul(narrow(w, -1, 0, T), words));
}

std::string PointerSentinelLM::extra_repr() const {
  return "vocab=" + std::to_string(config.vocab) + ", embed_dim=" + std::to_string(config.embed_dim) +
         ", hidden_dim=" + std::to_string(config.hidden_dim) +
         (config.pointer ? ", window=" + std::to_string(config.window) +
                               ", pointer_loss=" + (config.pointer_loss ? "true" : "false")
                         : std::string(", pointer=false"));
}

}  // namespace attn::models
