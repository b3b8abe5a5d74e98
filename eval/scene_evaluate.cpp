// Measuring a ShowAttendTell on scenes (see scene_evaluate.hpp).
#include "scene_evaluate.hpp"

#include "../core/ops.hpp"
#include "../decode/grid_decode.hpp"
#include "../nn/loss.hpp"

#include <algorithm>
#include <string>

namespace attn::models {

SceneEvaluation evaluate_scene_captioner(ShowAttendTell& model, const std::vector<data::Scene>& scenes,
                                         const data::Vocab& vocab, const SceneEvalOptions& options) {
  if (scenes.empty()) throw ValueError("evaluate_scene_captioner: expected scenes, got none");
  if (options.batch_size == 0) throw ValueError("evaluate_scene_captioner: batch_size must be at least 1");
  if (options.beam_size == 0) throw ValueError("evaluate_scene_captioner: beam_size must be at least 1 (1: greedy)");
  DecodeOptions decoding;
  decoding.beam_size = options.beam_size;
  decoding.max_len = options.max_len;
  if (options.max_len == 0)
    for (const data::Scene& s : scenes) decoding.max_len = std::max(decoding.max_len, s.caption.size() + 1 + 5);
  const std::size_t rows = model.grid_size(scenes.front().pixels.shape()[1], scenes.front().pixels.shape()[2])[0];

  no_grad guard;
  detail::EvalScope eval(model);
  SceneEvaluation result;
  double loss = 0.0, correct = 0.0, tokens = 0.0;
  std::vector<data::Tokens> references;
  for (std::size_t first = 0; first < scenes.size(); first += options.batch_size) {
    std::vector<std::size_t> indices;
    for (std::size_t i = first; i < std::min(first + options.batch_size, scenes.size()); ++i) indices.push_back(i);
    const data::SceneBatch batch = data::make_scene_batch(scenes, indices, vocab, model.dtype());

    // The pictures encoded once (eval mode: batch norm's running statistics), for both passes below.
    const Tensor features = model.encode(batch.images);  // [B, rows * cols, D]

    // Teacher forcing: the loss, the next-word accuracy, and where each gold word was looked for.
    Tensor logits = model.captioner.forward(features, batch.tgt_in);  // [B, T, V]
    double n = 0;
    for (std::size_t length : batch.tgt_lengths) n += static_cast<double>(length);
    loss += nn::cross_entropy(logits, batch.tgt_out, data::Vocab::pad_id, 0.0, nn::Reduction::Sum).item();
    correct += token_accuracy(logits, batch.tgt_out) * n;
    tokens += n;
    result.teacher_forced_share.add_batch(batch, model.last_attention().to_array(), rows);  // [B, T, rows * cols]

    // Free-running captions, greedy or by beam search.
    const std::vector<Hypothesis> captions = options.beam_size > 1 ? beam_caption(model.captioner, features, decoding)
                                                                   : greedy_caption(model.captioner, features, decoding);
    result.overall += compare(hypothesis_tokens(captions), sentences_of(batch.tgt_out));
    for (std::size_t b = 0; b < captions.size(); ++b) {
      const data::Tokens words = vocab.decode(captions[b].tokens);  // up to <eos>, specials dropped
      const Tensor weights = attention_grid(captions[b], rows);  // [T, rows, cols]
      if (!words.empty()) result.decoded_share.add_generated(scenes[batch.indices[b]], words, weights.to_array());
      result.captions.push_back(words);
      references.push_back(batch.captions[b]);
    }
  }
  result.loss = loss / tokens;
  result.teacher_forced_accuracy = correct / tokens;
  result.bleu = corpus_bleu(references, result.captions);
  return result;
}

}  // namespace attn::models
