// Measuring a GridCaptioner (see grid_evaluate.hpp).
#include "grid_evaluate.hpp"

#include "../core/ops.hpp"
#include "../decode/grid_decode.hpp"
#include "../nn/loss.hpp"
#include "evaluate.hpp"

#include <xtensor/xview.hpp>

#include <algorithm>
#include <string>

namespace attn::models {

GridEvaluation evaluate_grid_captioner(GridCaptioner& model, const std::vector<data::GridExample>& examples,
                                       const data::Vocab& vocab, std::size_t batch_size, std::size_t max_len) {
  if (examples.empty()) throw ValueError("evaluate_grid_captioner: expected examples, got none");
  if (batch_size == 0) throw ValueError("evaluate_grid_captioner: batch_size must be at least 1");
  DecodeOptions decoding;
  decoding.max_len = max_len;
  if (max_len == 0)
    for (const auto& e : examples) decoding.max_len = std::max(decoding.max_len, e.caption.size() + 1 + 5);

  no_grad guard;
  detail::EvalScope eval(model);
  GridEvaluation result;
  double loss = 0.0, correct = 0.0, tokens = 0.0;
  for (std::size_t first = 0; first < examples.size(); first += batch_size) {
    std::vector<std::size_t> indices;
    for (std::size_t i = first; i < std::min(first + batch_size, examples.size()); ++i) indices.push_back(i);
    const data::GridBatch batch = data::make_grid_batch(examples, indices, vocab, model.dtype());
    const std::vector<std::size_t> cells(batch.size(), batch.features.size(1));  // every cell may be attended
    const std::vector<Ids> gold_cells = alignment_rows(batch.cells);

    // Teacher forcing: the loss, the next-word accuracy, and where each gold word was looked for.
    Tensor logits = model.forward(batch.features, batch.tgt_in);  // [B, T, V]
    double n = 0;
    for (std::size_t length : batch.tgt_lengths) n += static_cast<double>(length);
    loss += nn::cross_entropy(logits, batch.tgt_out, data::Vocab::pad_id, 0.0, nn::Reduction::Sum).item();
    correct += token_accuracy(logits, batch.tgt_out) * n;
    tokens += n;
    result.alignment += alignment_accuracy(model.last_attention(), cells, gold_cells);

    // Free-running greedy captions.
    const std::vector<Hypothesis> captions = greedy_caption(model, batch.features, decoding);
    result.overall += compare(hypothesis_tokens(captions), sentences_of(batch.tgt_out));
    result.decoded_alignment += alignment_accuracy(captions, "attention", cells, gold_cells);
  }
  result.loss = loss / tokens;
  result.teacher_forced_accuracy = correct / tokens;
  return result;
}

}  // namespace attn::models
