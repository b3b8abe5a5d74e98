#include "language_model.hpp"

#include "../core/ops.hpp"

#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>
#include "../nn/loss.hpp"

#include <cmath>

namespace attn::models {

xt::xarray<double> LanguageModel::last_log_probs(const Index& text, DecoderState&) {
  const std::size_t T = text.shape()[1];
  return xt::view(next_log_probs(text), 0, T - 1, xt::all());  // [1, T, V] -> [V]
}

// ---- chapter 20: the pointer sentinel ----

Tensor PointerSentinelLanguageModel::loss(const Index& inputs, const Index& targets, double* cross_entropy) {
  const LanguageModelOutput out = lm.forward(inputs, targets);
  if (cross_entropy) {
    std::size_t n = 0;
    const double sum = PointerSentinelLM::nll_sum(out, targets, &n);
    *cross_entropy = n ? sum / double(n) : std::nan("");
  }
  return lm.loss(out, targets);
}

double PointerSentinelLanguageModel::nll_sum(const Index& inputs, const Index& targets, std::size_t* count) {
  no_grad guard;
  return PointerSentinelLM::nll_sum(lm.forward(inputs, targets), targets, count);
}

xt::xarray<double> PointerSentinelLanguageModel::next_log_probs(const Index& inputs) {
  no_grad guard;
  // The mixture is made of probabilities (a copy's weight adds to the softmax's): log only at the end.
  return xt::log(lm.next_word_probabilities(inputs).to_array());  // [B, T, V]
}

// ---- chapter 15: a Transformer whose decoder alone reads the text ----

namespace {

TransformerConfig with_source(TransformerConfig c) {
  c.src_vocab = TransformerLanguageModel::kSourceVocab;
  return c;
}

}  // namespace

TransformerLanguageModel::TransformerLanguageModel(TransformerConfig config) : transformer(with_source(config)) {}

Index TransformerLanguageModel::source(std::size_t B) const {
  return xt::full_like(xt::zeros<std::int64_t>({B, std::size_t(1)}), kSourceToken);  // [B, 1]
}

namespace {

void check_rows(const Index& inputs) {
  if (inputs.dimension() != 2 || inputs.shape()[0] == 0 || inputs.shape()[1] == 0)
    throw ShapeError("TransformerLanguageModel: expected inputs [B, T] with B, T >= 1, got " +
                     shape_str(Shape(inputs.shape().begin(), inputs.shape().end())));
}

}  // namespace

Tensor TransformerLanguageModel::logits(const Index& inputs) {
  check_rows(inputs);
  const std::size_t B = inputs.shape()[0];
  return transformer.forward(source(B), std::vector<std::size_t>(B, 1), inputs);  // [B, T, V]
}

xt::xarray<double> TransformerLanguageModel::last_log_probs(const Index& text, DecoderState& carry) {
  check_rows(text);
  no_grad guard;
  if (!carry.tensors.count("memory")) carry = transformer.start(source(1), {1});  // the constant source, once
  return xt::view(log_softmax(transformer.step(carry, text), -1).to_array(), 0, xt::all());  // [1, V] -> [V]
}

Tensor TransformerLanguageModel::loss(const Index& inputs, const Index& targets, double* cross_entropy) {
  // logits [B, T, V] against targets [B, T]: the mean over the targets that are not <pad>
  Tensor l = nn::cross_entropy(logits(inputs), targets, nn::CrossEntropyOptions().ignore_index(0));
  if (cross_entropy) *cross_entropy = l.item();
  return l;
}

double TransformerLanguageModel::nll_sum(const Index& inputs, const Index& targets, std::size_t* count) {
  no_grad guard;
  std::size_t n = 0;
  for (std::size_t i = 0; i < targets.size(); ++i) n += targets.flat(i) != 0;
  if (count) *count = n;
  if (n == 0) return 0.0;
  return nn::cross_entropy(logits(inputs), targets,
                           nn::CrossEntropyOptions().ignore_index(0).reduction(nn::Reduction::Sum))
      .item();
}

xt::xarray<double> TransformerLanguageModel::next_log_probs(const Index& inputs) {
  no_grad guard;
  return log_softmax(logits(inputs), -1).to_array();  // [B, T, V]
}

}  // namespace attn::models
