// The explorer (viz/explorer.hpp) filled from the course's models: every layer and head of a
// model's last forward(), and one hypothesis decoded step by step.
//
//   model.forward(src, src_lengths, tgt_in);                                     // any Seq2Seq
//   xcpp::display(viz::explore(model, source_words, target_words));              // head and model views
//
//   auto best = models::beam_search(model, src, src_lengths, options);          // or greedy_decode
//   xcpp::display(viz::explore_decoding(best[0], source_words, tgt_vocab));      // the decoding view
#pragma once

#include "explorer.hpp"

#include "../decode/decode.hpp"

#include <functional>
#include <map>

namespace attn::viz {

// The attentions of one sentence of a batch, cut to its tokens. source: its S source tokens;
// target: its T decoder inputs (from <bos>), the queries of decoder attention. Names as the
// models' last_attention() gives them, weights [B, T, S] or [B, H, T, S]:
//   a Transformer's "encoder.<l>.self", "decoder.<l>.self" and "decoder.<l>.cross" become the
//   attentions "encoder self" [L, H, S, S], "decoder self" [L, H, T, T] and "cross" [L, H, T, S]
//   (its "attention", their head average, is left out);
//   (every attention but "encoder self" has rows_read: its rows are the tokens the decoder reads);
//   any other name (a recurrent model's "attention", a copy head's "copy") one attention
//   [1, H, T, S] of that name; names ending in "_gate" (a copy gate) are not attention and are left out.
// ShapeError naming the weights when a sentence or a token is out of their range.
Explorer explore(const std::map<std::string, Tensor>& attention, const std::vector<std::string>& source,
                 const std::vector<std::string>& target, std::size_t sentence = 0);
// The same from model.last_attention(), with the model's name as the title.
Explorer explore(const models::Seq2Seq& model, const std::vector<std::string>& source,
                 const std::vector<std::string>& target, std::size_t sentence = 0);

struct DecodingView {
  std::string attention = "attention";  // the hypothesis' weights each step shows ([S], or [H, S]: head mean)
  std::string gate = "copy_gate";       // shown at each step when the hypothesis has it (p_gen, [1])
  bool expected_position = false;       // show sum_j j a_tj: the monotonic model's expected alignment path
};

// Hypothesis `hypothesis` step by step over its S = source.size() source tokens: the token
// written, the weights that chose it (Explorer::steps_label says which: a Transformer's
// "attention" is its last layer's cross-attention averaged over heads), beam search's kept
// prefixes (Hypothesis::beam) with the one the output continues, the written word's probability
// and the other words kept after the same prefix (from those prefixes' log-probabilities: greedy
// decoding records neither), and the gate and path of `view`. `word` spells an output id. ValueError naming the attention
// when the hypothesis has none of that name.
Explorer explore_decoding(const models::Hypothesis& hypothesis, const std::vector<std::string>& source,
                          const std::function<std::string(std::int64_t)>& word, const DecodingView& view = {});
// The same, spelling ids with `target` (ids past its end, a copy head's extended ids: "<id N>").
Explorer explore_decoding(const models::Hypothesis& hypothesis, const std::vector<std::string>& source,
                          const data::Vocab& target, const DecodingView& view = {});

}  // namespace attn::viz
