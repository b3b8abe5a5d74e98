// Beam search over any Seq2Seq (declared in decode.hpp).
//
// The batch of B sentences becomes B * K rows, K = beam_size: rows b*K .. b*K+K-1
// hold the K live prefixes of sentence b. At every step, each live prefix is
// extended by every token (K * V candidates per sentence, scored by the sum of
// log-probabilities so far); the best candidates that end in <eos> become
// finished hypotheses, the best K others the next beam. The decoder state is then
// reordered with DecoderState::select_rows so that each row follows its parent.
#include "decode.hpp"

#include "../models/checks.hpp"

#include "../core/ops.hpp"

#include <algorithm>
#include <functional>
#include <cmath>
#include <limits>
#include <numeric>

namespace attn::models {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// A finished hypothesis before its attention is collected: where it ended.
struct Ending {
  Hypothesis hypothesis;
  std::size_t step = 0, row = 0;
};

// One extension of a live prefix: row `row` followed by `token`.
struct Candidate {
  double log_prob;
  std::size_t row;
  std::int64_t token;
};

// Row numbers as an Index, for DecoderState::select_rows.
Index as_index(const std::vector<std::size_t>& rows) {
  Index index = Index::from_shape({rows.size()});
  std::copy(rows.begin(), rows.end(), index.begin());
  return index;
}

// The prefix of `row` without <bos>, followed by `token`.
std::vector<std::int64_t> tokens_of(const Index& prefix, std::size_t row, std::int64_t token) {
  std::vector<std::int64_t> tokens;
  for (std::size_t j = 1; j < prefix.shape()[1]; ++j) tokens.push_back(prefix(row, j));
  tokens.push_back(token);
  return tokens;
}

// The best `count` extensions of rows [first, first + K), best first. Ties go to
// the lower row, then the lower token, so the search is deterministic.
std::vector<Candidate> best_candidates(const xt::xarray<double>& log_probs, const std::vector<double>& beam_log_prob,
                                       std::size_t first, std::size_t K, std::size_t count) {
  std::vector<Candidate> all;
  const std::size_t vocab = log_probs.shape()[1];
  for (std::size_t r = first; r < first + K; ++r) {
    if (beam_log_prob[r] == kNegInf) continue;  // an empty slot of the beam
    for (std::size_t v = 0; v < vocab; ++v)
      all.push_back({beam_log_prob[r] + log_probs(r, v), r, static_cast<std::int64_t>(v)});
  }
  count = std::min(count, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<long>(count), all.end(),
                    [](const Candidate& a, const Candidate& b) {
                      if (a.log_prob != b.log_prob) return a.log_prob > b.log_prob;
                      return a.row != b.row ? a.row < b.row : a.token < b.token;
                    });
  all.resize(count);
  return all;
}

// The attention the coverage penalty sums, after checking the options (before any encoder runs).
std::string checked_coverage_name(const IncrementalDecoder& model, const DecodeOptions& options) {
  if (options.beam_size < 1) throw ValueError("beam_search: beam_size must be at least 1, got 0");
  if (options.max_len < 1) throw ValueError("beam_search: max_len must be at least 1, got 0");
  if (options.coverage_penalty < 0)
    throw ValueError("beam_search: coverage_penalty (beta) must be >= 0, got " + std::to_string(options.coverage_penalty));
  const std::string coverage_name =
      options.coverage_attention.empty() ? model.main_attention() : options.coverage_attention;
  if (options.coverage_penalty > 0 && coverage_name.empty())
    throw ValueError("beam_search: a coverage penalty needs attention, and this model (" + model.type_name() +
                     ") has none");
  return coverage_name;
}

// The search from a started state; `greedy_decoding` decodes the same sentences greedily (keep_greedy).
std::vector<std::vector<Hypothesis>> beam_from(IncrementalDecoder& model, DecoderState state,
                                               const DecodeOptions& options,
                                               const std::function<std::vector<Hypothesis>()>& greedy_decoding) {
  const std::string coverage_name = checked_coverage_name(model, options);
  const std::vector<std::size_t> src_lengths = state.src_lengths;  // one per sentence, before the rows are copied
  if (src_lengths.empty()) throw ValueError("beam_search: the decoder state has no rows (its src_lengths is empty)");
  no_grad guard;
  detail::EvalScope eval(model);

  const std::size_t batch = src_lengths.size(), K = options.beam_size, rows = batch * K;
  std::vector<std::size_t> order(rows);  // row b*K + k starts as a copy of sentence b
  for (std::size_t r = 0; r < rows; ++r) order[r] = r / K;
  state.select_rows(as_index(order));

  // Only the first slot of each beam is live at the start: the others would repeat it.
  std::vector<double> beam_log_prob(rows, kNegInf);
  for (std::size_t b = 0; b < batch; ++b) beam_log_prob[b * K] = 0.0;
  Index prefix = detail::first_prefix(rows, options.bos_id);  // [B*K, 1]
  std::vector<std::vector<Ending>> endings(batch);
  std::vector<bool> done(batch, false);
  std::vector<std::map<std::string, Tensor>> history;  // attention of every step, every row
  std::vector<std::vector<std::size_t>> parents;        // parents[t][r]: row at step t that row r continues
  using Kept = std::vector<std::pair<std::vector<std::int64_t>, double>>;
  std::vector<std::vector<Kept>> kept(batch);           // kept[b][t]: Hypothesis::beam of sentence b

  for (std::size_t t = 0; t < options.max_len; ++t) {
    Tensor logits = model.step(state, prefix);  // [B*K, V]
    detail::check_logits("beam_search", logits, rows);
    const xt::xarray<double> log_probs = log_softmax(logits, -1).to_array();  // [B*K, V]
    history.push_back(state.attention);
    const bool last_step = t + 1 == options.max_len;

    std::vector<std::size_t> next_rows(rows);
    std::vector<std::int64_t> next_tokens(rows, options.pad_id);
    std::vector<double> next_log_prob(rows, kNegInf);
    for (std::size_t b = 0; b < batch; ++b) {
      const std::size_t first = b * K;
      for (std::size_t k = 0; k < K; ++k) next_rows[first + k] = first + k;  // empty slots stay put
      if (done[b]) continue;
      // 2K candidates always hold K that do not end (each row has a single <eos>).
      std::size_t filled = 0;
      Kept& step_kept = kept[b].emplace_back();
      for (const Candidate& c : best_candidates(log_probs, beam_log_prob, first, K, 2 * K)) {
        if (filled == K) break;
        step_kept.emplace_back(tokens_of(prefix, c.row, c.token), c.log_prob);
        if (c.token == options.eos_id || last_step) {
          Ending e{{}, t, c.row};
          e.hypothesis.tokens = tokens_of(prefix, c.row, c.token);
          e.hypothesis.log_prob = c.log_prob;
          e.hypothesis.finished = c.token == options.eos_id;
          e.hypothesis.score = length_normalized_score(c.log_prob, e.hypothesis.tokens.size(), options);
          endings[b].push_back(std::move(e));
          if (!last_step) continue;
        }
        next_rows[first + filled] = c.row;
        next_tokens[first + filled] = c.token;
        next_log_prob[first + filled] = c.log_prob;
        ++filled;
      }
      // Done once K hypotheses have finished; without a length penalty also as
      // soon as the best finished one beats every live prefix, since extending a
      // prefix can only lower its log-probability.
      double best_ended = kNegInf;
      for (const Ending& e : endings[b]) best_ended = std::max(best_ended, e.hypothesis.score);
      const double best_live = *std::max_element(next_log_prob.begin() + first, next_log_prob.begin() + first + K);
      done[b] = last_step || endings[b].size() >= K ||
                (options.length_penalty == LengthPenalty::None && options.coverage_penalty == 0 &&
                 !endings[b].empty() && best_ended >= best_live);
    }
    if (std::all_of(done.begin(), done.end(), [](bool d) { return d; })) break;
    state.select_rows(as_index(next_rows));
    prefix = detail::extend_prefix(prefix, next_rows, next_tokens);  // [B*K, t + 2]
    beam_log_prob = next_log_prob;
    parents.push_back(next_rows);
  }

  std::vector<Hypothesis> greedy;
  if (options.keep_greedy) greedy = greedy_decoding();

  std::vector<std::vector<Hypothesis>> out(batch);
  for (std::size_t b = 0; b < batch; ++b) {
    for (Ending& e : endings[b]) {
      detail::collect_attention(history, parents, e.step, e.row, e.hypothesis);
      out[b].push_back(std::move(e.hypothesis));
    }
    if (options.keep_greedy) {
      // The beam may have found the greedy output too, with a log-probability that
      // differs in the last bits (the batch has another shape, so the roundings
      // differ): keep the greedy copy, so that the guarantee holds exactly.
      auto same = std::find_if(out[b].begin(), out[b].end(),
                               [&](const Hypothesis& h) { return h.tokens == greedy[b].tokens; });
      if (same != out[b].end()) *same = std::move(greedy[b]);
      else out[b].push_back(std::move(greedy[b]));  // the search dropped it at some step
    }
    for (Hypothesis& h : out[b]) {
      // The steps whose record holds h's own prefix: all of them for the search's own hypotheses,
      // those before the search dropped it for an appended greedy sentence.
      std::size_t steps = 0;
      for (; steps < std::min(kept[b].size(), h.tokens.size()); ++steps) {
        const std::vector<std::int64_t> own(h.tokens.begin(), h.tokens.begin() + static_cast<long>(steps) + 1);
        const Kept& at = kept[b][steps];
        if (std::none_of(at.begin(), at.end(), [&](const auto& k) { return k.first == own; })) break;
      }
      h.beam.assign(kept[b].begin(), kept[b].begin() + static_cast<long>(steps));
    }
    if (options.coverage_penalty > 0)
      for (Hypothesis& h : out[b])
        h.score = length_normalized_score(h.log_prob, h.tokens.size(), options) +
                  coverage_score(attention_matrix(h, coverage_name).to_array(), src_lengths[b], options.coverage_penalty);
    std::stable_sort(out[b].begin(), out[b].end(),
                     [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
    if (out[b].size() > std::max<std::size_t>(options.n_best, 1)) out[b].resize(std::max<std::size_t>(options.n_best, 1));
  }
  return out;
}

}  // namespace

std::vector<std::vector<Hypothesis>> beam_search_n_best(Seq2Seq& model, const Index& src,
                                                        const std::vector<std::size_t>& src_lengths,
                                                        const DecodeOptions& options) {
  check_source("beam_search", src, src_lengths);
  no_grad guard;
  detail::EvalScope eval(model);  // before start(): the encoder runs in eval mode too
  checked_coverage_name(model, options);  // bad options fail before the encoder runs
  return beam_from(model, model.start(src, src_lengths), options,
                   [&] { return greedy_decode(model, src, src_lengths, options); });
}

std::vector<std::vector<Hypothesis>> beam_search_n_best(IncrementalDecoder& model, DecoderState state,
                                                        const DecodeOptions& options) {
  const DecoderState initial = state;  // greedy decoding starts again from here (keep_greedy)
  return beam_from(model, std::move(state), options, [&] { return greedy_decode(model, initial, options); });
}

std::vector<Hypothesis> beam_search(Seq2Seq& model, const Index& src, const std::vector<std::size_t>& src_lengths,
                                    const DecodeOptions& options) {
  std::vector<Hypothesis> best;
  for (auto& hypotheses : beam_search_n_best(model, src, src_lengths, options)) best.push_back(std::move(hypotheses.front()));
  return best;
}

std::vector<Hypothesis> beam_search(IncrementalDecoder& model, DecoderState state, const DecodeOptions& options) {
  std::vector<Hypothesis> best;
  for (auto& hypotheses : beam_search_n_best(model, std::move(state), options)) best.push_back(std::move(hypotheses.front()));
  return best;
}

}  // namespace attn::models
