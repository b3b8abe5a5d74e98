#include "speech_training.hpp"

#include "../core/ops.hpp"
#include "../decode/decode.hpp"
#include "../eval/error_rate.hpp"
#include "../nn/loss.hpp"

namespace attn::models {

namespace {

constexpr std::size_t kDecodeBatch = 50;
constexpr std::size_t kMaxCharacters = 200;

std::string text_of(const Hypothesis& h, const data::Vocab& vocab) {
  std::string text;
  for (std::int64_t id : h.tokens)
    if (!data::Vocab::is_special(id)) text += vocab.token(id);
  return text;
}

}  // namespace

std::vector<std::string> transcribe_speech(ListenAttendSpell& model, const std::vector<data::SpeechExample>& examples,
                                           const data::Vocab& vocab, std::size_t beam, std::size_t max_len) {
  DecodeOptions options;
  options.max_len = max_len;
  options.beam_size = beam;
  std::vector<std::string> out;
  for (std::size_t first = 0; first < examples.size(); first += kDecodeBatch) {
    std::vector<std::size_t> rows;
    for (std::size_t i = first; i < std::min(examples.size(), first + kDecodeBatch); ++i) rows.push_back(i);
    const data::SpeechBatch b = data::make_speech_batch(examples, rows, vocab, model.dtype());
    no_grad guard;
    DecoderState state = model.start(b.features, b.lengths);
    const std::vector<Hypothesis> best = beam > 1 ? beam_search(model, state, options) : greedy_decode(model, state, options);
    for (const auto& h : best) out.push_back(text_of(h, vocab));
  }
  return out;
}

std::vector<std::string> speech_texts(const std::vector<data::SpeechExample>& examples) {
  std::vector<std::string> out;
  for (const auto& e : examples) out.push_back(e.text);
  return out;
}

std::size_t speech_decode_length(const std::vector<data::SpeechExample>& examples) {
  std::size_t longest = 0;
  for (const auto& e : examples) longest = std::max(longest, e.text.size());
  return std::min(kMaxCharacters, 2 * longest + 1);
}

EpochFamily speech_family(ListenAttendSpell& model, const std::vector<data::SpeechExample>& train,
                          const std::vector<data::SpeechExample>& valid, const data::Vocab& vocab,
                          std::size_t batch_size) {
  if (train.empty()) throw ValueError("speech_family: expected training utterances, got none");
  if (batch_size == 0) throw ValueError("speech_family: batch_size must be at least 1");
  auto epoch = std::make_shared<std::vector<data::SpeechBatch>>();
  const std::size_t max_len = speech_decode_length(valid);
  EpochFamily f;
  f.draw_epoch = [&model, &train, &vocab, batch_size, epoch](Generator& order) {
    data::BatchOptions batching;
    batching.batch_size = batch_size;
    batching.sort_buckets = 4;  // utterances of similar length together: less padding
    *epoch = data::make_speech_batches(train, vocab, batching, order, model.dtype());
    return epoch->size();
  };
  f.step = [&model, &vocab, epoch](std::size_t i) {
    const data::SpeechBatch& b = epoch->at(i);
    const Tensor logits = model.forward(b.features, b.lengths, b.tgt_in);  // [B, L, V]
    const long rows = long(b.tgt_in.size());
    const Index targets = xt::reshape_view(b.tgt_out, {std::size_t(rows)});  // [B * L]
    return EpochStep{nn::cross_entropy(reshape(logits, {rows, long(vocab.size())}), targets, data::Vocab::pad_id)};
  };
  f.validate = [&model, &valid, &vocab, max_len] {
    model.eval();
    return character_error_rate(transcribe_speech(model, valid, vocab, 1, max_len), speech_texts(valid)).rate();
  };
  return f;
}

}  // namespace attn::models
