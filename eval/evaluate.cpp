#include "evaluate.hpp"

#include "../core/ops.hpp"
#include "../nn/loss.hpp"
#include "../decode/decode.hpp"
#include "../models/extended_source.hpp"

#include <algorithm>
#include <numeric>

namespace attn::models {

std::vector<Ids> alignment_rows(const Index& alignment) {
  std::vector<Ids> rows;
  if (alignment.dimension() != 2) return rows;
  for (std::size_t b = 0; b < alignment.shape()[0]; ++b) {
    Ids row;
    for (std::size_t t = 0; t < alignment.shape()[1]; ++t) row.push_back(alignment(b, t));
    rows.push_back(row);
  }
  return rows;
}

Evaluation evaluate(Seq2Seq& model, const std::vector<data::Example>& examples, const data::Vocab& src_vocab,
                    const data::Vocab& tgt_vocab, const EvaluateOptions& options) {
  if (examples.empty()) throw ValueError("evaluate: expected at least one example, got none");
  if (options.batch_size == 0) throw ValueError("evaluate: batch_size must be at least 1");
  no_grad guard;
  detail::EvalScope eval(model);

  // Sources of similar length together: less padding, the same batches every time.
  std::vector<std::size_t> order(examples.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return examples[a].src.size() < examples[b].src.size(); });

  Evaluation e;
  double loss_sum = 0.0;
  std::size_t tokens = 0, correct = 0;
  for (std::size_t first = 0; first < order.size(); first += options.batch_size) {
    const std::vector<std::size_t> indices(order.begin() + static_cast<long>(first),
                                           order.begin() + static_cast<long>(std::min(first + options.batch_size, order.size())));
    const data::Batch batch = data::make_batch(examples, indices, src_vocab, tgt_vocab);

    // A copying model reads and writes the batch's extended vocabulary: it can write a source word
    // the target vocabulary lacks, and such a word in the reference is its copy's id, not <unk>.
    auto* copying = dynamic_cast<CopyingModel*>(&model);
    const bool extended = copying && copying->copies();
    ExtendedBatch ext;
    if (extended) ext = extended_batch(batch, examples, tgt_vocab);
    const Index& tgt_out = extended ? ext.tgt_out : batch.tgt_out;

    // Teacher forcing: loss, next-token accuracy, attention against the gold alignment.
    Tensor logits = extended ? copying->forward_extended(batch.src, batch.src_lengths, ext.tgt_in, ext.source)  // [B, T, V + n]
                             : model.forward(batch.src, batch.src_lengths, batch.tgt_in);                      // [B, T, V]
    loss_sum += nn::cross_entropy(logits, tgt_out, data::Vocab::pad_id, 0.0, nn::Reduction::Sum).item();
    const Index next = argmax(logits, -1);  // [B, T]
    for (std::size_t i = 0; i < next.size(); ++i) {
      if (tgt_out.flat(i) == data::Vocab::pad_id) continue;
      ++tokens;
      correct += next.flat(i) == tgt_out.flat(i) ? 1 : 0;
    }
    const auto attention = model.last_attention();
    const std::string name = model.main_attention();
    if (batch.has_alignment() && !name.empty() && attention.count(name) && attention.at(name).dim() == 3)
      e.alignment += alignment_accuracy(attention.at(name), batch.src_lengths, alignment_rows(batch.alignment));

    // Greedy decoding against the gold sentences.
    DecodeOptions decode;
    decode.max_len = options.max_len ? options.max_len : 2 * batch.src.shape()[1] + 10;
    const std::vector<Ids> predicted = hypothesis_tokens(
        extended ? greedy_decode(model, copying->start_extended(batch.src, batch.src_lengths, ext.source), decode)
                 : greedy_decode(model, batch.src, batch.src_lengths, decode));
    const std::vector<Ids> gold = sentences_of(tgt_out);
    e.overall += compare(predicted, gold);
    for (const auto& [length, counts] : accuracy_by_length(predicted, gold, batch.src_lengths))
      e.by_length[length] += counts;
    // BLEU on words: the gold side is the example's own words, so a word outside
    // the vocabulary (<unk> in the batch) can never be matched.
    for (std::size_t i = 0; i < indices.size(); ++i) {
      const data::Example& example = examples[indices[i]];
      data::Tokens words = extended ? ext.source.decode(predicted[i], tgt_vocab) : tgt_vocab.decode(predicted[i]);
      const BleuStats stats = bleu_stats({example.tgt}, words);
      e.bleu += stats;
      e.bleu_by_length[example.src.size()] += stats;
      if (options.keep_predictions) e.predictions.push_back({indices[i], std::move(words)});
    }
  }
  e.loss = loss_sum / double(std::max<std::size_t>(tokens, 1));
  e.teacher_forced_accuracy = double(correct) / double(std::max<std::size_t>(tokens, 1));
  return e;
}

}  // namespace attn::models
