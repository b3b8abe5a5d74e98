// Decoding: turning a trained Seq2Seq into output sentences, one token at a time.
//
//   DecodeOptions opt;
//   opt.max_len = 40;
//   std::vector<Hypothesis> out = greedy_decode(model, src, src_lengths, opt);  // one per sentence
//   out[0].tokens      // {7, 4, 9, 2}: generated ids, ending with <eos> once it is produced
//   out[0].log_prob    // log p(tokens | src) = sum over steps of log softmax(logits)[token]
//   attention_matrix(out[0], "attention")   // [T, S]: the weights of every step
//
//   opt.beam_size = 5;
//   opt.length_penalty = LengthPenalty::GNMT;  // score = log_prob / ((5 + |Y|) / 6)^alpha
//   opt.coverage_penalty = 0.2;                // + beta * sum_i log min(sum_t a_ti, 1)
//   std::vector<Hypothesis> best = beam_search(model, src, src_lengths, opt);
//
// Greedy decoding picks the most probable token at every step. Beam search keeps
// the beam_size most probable prefixes of each sentence instead, extends every
// one by every token, and keeps the best beam_size again; a prefix that takes
// <eos> leaves the beam as a finished hypothesis. Both run the whole batch at
// once, under no_grad and in eval mode (the model's mode is restored after).
//
// Beam search is a heuristic: a prefix it prunes might have ended better, so it
// can in principle finish below the greedy sentence. With keep_greedy (the
// default) it also decodes greedily and keeps whichever scores higher, so with
// LengthPenalty::None its log-probability is never below greedy's.
#pragma once

#include "../data/vocab.hpp"
#include "../models/seq2seq.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace attn::models {

// How beam search compares hypotheses of different lengths |Y| (tokens, <eos> included).
enum class LengthPenalty {
  None,     // score = log_prob: favours short outputs, since every token costs probability
  Average,  // score = log_prob / |Y|
  GNMT,     // score = log_prob / ((5 + |Y|) / 6)^alpha   (Wu et al. 2016)
};

struct DecodeOptions {
  std::size_t max_len = 50;    // tokens generated at most, <eos> included
  std::size_t beam_size = 4;   // beam search only
  std::size_t n_best = 1;      // hypotheses per sentence returned by beam_search_n_best
  LengthPenalty length_penalty = LengthPenalty::None;
  double alpha = 0.6;          // the GNMT exponent
  // Beam search only: beta of GNMT's coverage penalty, which lowers the score of
  // outputs that leave source words unattended (0: off). Finished hypotheses are
  // ranked by score + coverage_score(); which ones finish is decided as before.
  double coverage_penalty = 0.0;
  std::string coverage_attention;  // the attention it sums ("": the model's main_attention())
  bool keep_greedy = true;     // beam search: never return worse than the greedy sentence
  std::int64_t bos_id = data::Vocab::bos_id;
  std::int64_t eos_id = data::Vocab::eos_id;
  std::int64_t pad_id = data::Vocab::pad_id;  // fed to rows that have finished
};

struct Hypothesis {
  std::vector<std::int64_t> tokens;  // generated ids without <bos>; the last is <eos> if finished
  double log_prob = 0.0;             // sum of the log-probabilities of `tokens`
  double score = 0.0;                // log_prob after the length penalty: what beam search ranks
  bool finished = false;             // produced <eos> (false: stopped by max_len)
  // For every name of DecoderState::attention, that sentence's weights at each
  // step: attention[name][t] is [S] (or [H, S]) when tokens[t] was chosen, or [1] for a
  // gate such as chapter 12's "copy_gate". S is the padded source length of the batch;
  // positions past the sentence get 0.
  std::map<std::string, std::vector<Tensor>> attention;
  // Beam search only (empty after greedy decoding; for the greedy sentence that keep_greedy
  // adds when the search had dropped it, only the steps before it was dropped): beam[t] holds what the search kept at
  // step t, when tokens[t] was chosen: every prefix of t + 1 tokens it went on with or
  // finished there, best first, with its log-probability (viz::explore_decoding shows it).
  std::vector<std::vector<std::pair<std::vector<std::int64_t>, double>>> beam;
};

// The score of a hypothesis of `length` tokens with log-probability `log_prob`.
double length_normalized_score(double log_prob, std::size_t length, const DecodeOptions& options);

// GNMT's coverage penalty (Wu et al. 2016): cp = beta * sum_i log(min(c_i, 1)),
// c_i = sum over output steps t of the attention a_ti on source word i, over the
// first `src_length` source words. Never positive: 0 when every word got a total
// weight of at least 1. A word never attended (c_i = 0) counts as c_i = 1e-10,
// so that the score stays finite. weights: [T, S], or [T, H, S] averaged over heads.
double coverage_score(const xt::xarray<double>& weights, std::size_t src_length, double beta);

// A hypothesis' weights under `name`, stacked over steps: [T, S] (or [T, H, S]).
// Throws ValueError if the hypothesis has no attention of that name.
Tensor attention_matrix(const Hypothesis& hypothesis, const std::string& name);

// src [B, S] (padded), src_lengths [B]: one hypothesis per sentence.
std::vector<Hypothesis> greedy_decode(Seq2Seq& model, const Index& src, const std::vector<std::size_t>& src_lengths,
                                      const DecodeOptions& options = {});
// From the state a model's start() returned, for models whose source is not token ids
// (LAS::start(features, lengths)): one hypothesis per row of the state (state.src_lengths).
std::vector<Hypothesis> greedy_decode(IncrementalDecoder& model, DecoderState state, const DecodeOptions& options = {});

// The best hypothesis of each sentence.
std::vector<Hypothesis> beam_search(Seq2Seq& model, const Index& src, const std::vector<std::size_t>& src_lengths,
                                    const DecodeOptions& options = {});

// Up to options.n_best hypotheses per sentence, best score first.
std::vector<std::vector<Hypothesis>> beam_search_n_best(Seq2Seq& model, const Index& src,
                                                        const std::vector<std::size_t>& src_lengths,
                                                        const DecodeOptions& options = {});

// The same from a started state, as greedy_decode above.
std::vector<Hypothesis> beam_search(IncrementalDecoder& model, DecoderState state, const DecodeOptions& options = {});
std::vector<std::vector<Hypothesis>> beam_search_n_best(IncrementalDecoder& model, DecoderState state,
                                                        const DecodeOptions& options = {});

namespace detail {

// What greedy decoding and beam search share (decode/decode.cpp).

// Puts a module in eval mode for a scope, then restores its mode.
class EvalScope {
 public:
  explicit EvalScope(nn::Module& module) : module_(module), was_training_(module.is_training()) { module.eval(); }
  ~EvalScope() { module_.train(was_training_); }
  EvalScope(const EvalScope&) = delete;
  EvalScope& operator=(const EvalScope&) = delete;

 private:
  nn::Module& module_;
  bool was_training_;
};

// Throws unless step() returned logits [rows, V] with V > 0.
void check_logits(const char* op, const Tensor& logits, std::size_t rows);

// A column of `rows` copies of `value`: the first prefix, all <bos>. [rows, 1]
Index first_prefix(std::size_t rows, std::int64_t value);
// prefix[rows[i]] followed by tokens[i], for every i: [N, t] -> [rows.size(), t + 1].
Index extend_prefix(const Index& prefix, const std::vector<std::size_t>& rows, const std::vector<std::int64_t>& tokens);

// Fills hypothesis.attention by walking back from (step, row): history[s] holds the
// attention of decoder step s for every row, parents[s][r] the row at step s that
// row r of step s + 1 continues (no parents: rows never move, as in greedy).
void collect_attention(const std::vector<std::map<std::string, Tensor>>& history,
                       const std::vector<std::vector<std::size_t>>& parents, std::size_t step, std::size_t row,
                       Hypothesis& hypothesis);

}  // namespace detail

}  // namespace attn::models
