// Greedy decoding and beam search over any Seq2Seq: log-probabilities and
// attention that agree with a teacher-forced forward() of the same output,
// beam 1 == greedy, beam >= greedy on every sentence, exactness against
// brute force on a tiny vocabulary, length penalties, bad options.
#include "../models/tiny.hpp"

#include "models/bahdanau.hpp"
#include "decode/decode.hpp"
#include "models/luong.hpp"
#include "models/seq2seq_plain.hpp"
#include "models/transformer_seq2seq.hpp"

#include <xtensor/xview.hpp>

#include <array>
#include <cmath>
#include <functional>
#include <memory>

using attn::Index;
using attn::Tensor;
using namespace attn::models;

namespace {

std::unique_ptr<Seq2Seq> tiny_bahdanau(std::size_t vocab = 5) {
  BahdanauConfig c;
  c.src_vocab = c.tgt_vocab = vocab;
  c.embed_dim = 4;
  c.encoder_dim = 4;
  c.decoder_dim = 6;
  c.attention_dim = 5;
  return std::make_unique<BahdanauSeq2Seq>(c);
}

// A batch of random sources with ids in 3..vocab-1, lengths in 1..max_len.
struct Sources {
  Index src;
  std::vector<std::size_t> lengths;
};
Sources random_sources(std::size_t n, std::size_t max_len, std::size_t vocab, std::uint64_t seed) {
  attn::Generator gen(seed);
  Sources s;
  s.src = xt::zeros<std::int64_t>({n, max_len});
  for (std::size_t b = 0; b < n; ++b) {
    s.lengths.push_back(static_cast<std::size_t>(gen.randint(1, static_cast<std::int64_t>(max_len) + 1)));
    for (std::size_t j = 0; j < s.lengths[b]; ++j) s.src(b, j) = gen.randint(3, static_cast<std::int64_t>(vocab));
  }
  return s;
}

// Teacher-forced log p(tokens | sentence b) and attention [T, S], from forward().
std::pair<double, xt::xarray<double>> rescore(Seq2Seq& model, const Sources& s, std::size_t b,
                                              const std::vector<std::int64_t>& tokens) {
  attn::no_grad guard;
  const std::size_t S = s.src.shape()[1], T = tokens.size();
  Index src = Index::from_shape({1, S}), tgt_in = Index::from_shape({1, T});
  for (std::size_t j = 0; j < S; ++j) src(0, j) = s.src(b, j);
  tgt_in(0, 0) = attn::data::Vocab::bos_id;
  for (std::size_t t = 1; t < T; ++t) tgt_in(0, t) = tokens[t - 1];
  const xt::xarray<double> lp = attn::log_softmax(model.forward(src, {s.lengths[b]}, tgt_in), -1).to_array();
  double total = 0;
  for (std::size_t t = 0; t < T; ++t) total += lp(0, t, static_cast<std::size_t>(tokens[t]));
  auto attention = model.last_attention();
  xt::xarray<double> a;
  if (attention.count("attention")) {
    a = attention.at("attention").to_array();
    a.reshape({T, S});
  }
  return {total, a};
}

void check_against_forward(Seq2Seq& model, const Sources& s, const std::vector<Hypothesis>& hyps) {
  for (std::size_t b = 0; b < hyps.size(); ++b) {
    const Hypothesis& h = hyps[b];
    REQUIRE(!h.tokens.empty());
    const auto [log_prob, attention] = rescore(model, s, b, h.tokens);
    CHECK(h.log_prob == doctest::Approx(log_prob).epsilon(1e-10));
    if (attention.dimension() == 2) {  // the model has attention
      const xt::xarray<double> decoded = attention_matrix(h, "attention").to_array();  // [T, S]
      REQUIRE(decoded.shape() == attention.shape());
      CHECK(xt::amax(xt::abs(decoded - attention))() < 1e-10);
    }
  }
}

}  // namespace

TEST_CASE("greedy_decode: log-probabilities and attention match a teacher-forced forward()") {
  attn::manual_seed(1);
  auto model = tiny_bahdanau();
  const Sources s = random_sources(6, 4, 5, 11);
  DecodeOptions opt;
  opt.max_len = 6;
  const auto hyps = greedy_decode(*model, s.src, s.lengths, opt);
  REQUIRE(hyps.size() == 6);
  for (const Hypothesis& h : hyps) {
    CHECK(h.tokens.size() <= 6);
    CHECK(h.finished == (h.tokens.back() == attn::data::Vocab::eos_id));
    CHECK(h.score == h.log_prob);  // no length penalty
  }
  check_against_forward(*model, s, hyps);

  // Each sentence alone decodes as it does in the batch.
  for (std::size_t b = 0; b < 6; ++b) {
    Sources one{xt::view(s.src, xt::range(b, b + 1), xt::all()), {s.lengths[b]}};
    const auto alone = greedy_decode(*model, one.src, one.lengths, opt);
    CHECK(alone[0].tokens == hyps[b].tokens);
    CHECK(alone[0].log_prob == doctest::Approx(hyps[b].log_prob).epsilon(1e-12));
  }
}

TEST_CASE("greedy_decode works for a model without attention and restores training mode") {
  attn::manual_seed(2);
  PlainSeq2SeqConfig c;
  c.src_vocab = c.tgt_vocab = 6;
  PlainSeq2Seq model(c);
  model.train();
  const Sources s = random_sources(3, 5, 6, 12);
  const auto hyps = greedy_decode(model, s.src, s.lengths);
  CHECK(model.is_training());
  check_against_forward(model, s, hyps);
  CHECK(hyps[0].attention.empty());
  CHECK_THROWS_WITH_SUBSTR(attention_matrix(hyps[0], "attention"), attn::ValueError, "no attention named");
}

TEST_CASE("beam_search: beam 1 is greedy; wider beams score at least as high on every sentence") {
  attn::manual_seed(3);
  auto model = tiny_bahdanau(7);
  const Sources s = random_sources(20, 5, 7, 13);
  DecodeOptions opt;
  opt.max_len = 8;
  const auto greedy = greedy_decode(*model, s.src, s.lengths, opt);

  opt.beam_size = 1;
  opt.keep_greedy = false;  // the search alone
  const auto beam1 = beam_search(*model, s.src, s.lengths, opt);
  for (std::size_t b = 0; b < 20; ++b) {
    CHECK(beam1[b].tokens == greedy[b].tokens);
    CHECK(beam1[b].log_prob == doctest::Approx(greedy[b].log_prob).epsilon(1e-12));
  }

  for (std::size_t K : {2, 3, 5}) {
    CAPTURE(K);
    opt.beam_size = K;
    opt.keep_greedy = true;
    const auto beam = beam_search(*model, s.src, s.lengths, opt);
    std::size_t better = 0;
    for (std::size_t b = 0; b < 20; ++b) {
      CHECK(beam[b].log_prob >= greedy[b].log_prob);
      better += beam[b].log_prob > greedy[b].log_prob + 1e-9 ? 1 : 0;
    }
    CHECK(better > 0);  // the search does find better outputs than greedy
    check_against_forward(*model, s, beam);  // tokens, log-probs and attention survive the reordering
  }
}

TEST_CASE("beam_search records what it kept at every step (Hypothesis::beam); greedy records nothing") {
  std::size_t finished = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {  // untrained models: some end their outputs, some never do
    CAPTURE(seed);
    attn::manual_seed(seed);
    auto model = tiny_bahdanau(4);  // ids 0..3, <eos> = 2
    const Sources s = random_sources(4, 5, 4, 16 + seed);
    DecodeOptions opt;
    opt.max_len = 8;
    for (const Hypothesis& h : greedy_decode(*model, s.src, s.lengths, opt)) CHECK(h.beam.empty());
    opt.beam_size = 3;
    opt.keep_greedy = false;  // every hypothesis is the search's own
    for (const Hypothesis& h : beam_search(*model, s.src, s.lengths, opt)) {
      finished += h.finished ? 1 : 0;
      REQUIRE(h.beam.size() == h.tokens.size());
      for (std::size_t t = 0; t < h.beam.size(); ++t) {
        CAPTURE(t);
        REQUIRE(!h.beam[t].empty());
        CHECK(h.beam[t].size() <= 2 * opt.beam_size);  // K live prefixes, and those that ended there
        const std::vector<std::int64_t> own(h.tokens.begin(), h.tokens.begin() + static_cast<long>(t) + 1);
        bool found = false;
        for (std::size_t k = 0; k < h.beam[t].size(); ++k) {
          CHECK(h.beam[t][k].first.size() == t + 1);
          if (k > 0) CHECK(h.beam[t][k].second <= h.beam[t][k - 1].second);  // best first
          if (h.beam[t][k].first == own) {
            found = true;
            if (t + 1 == h.tokens.size()) CHECK(h.beam[t][k].second == h.log_prob);
          }
        }
        CHECK(found);  // the hypothesis' own prefix was kept at every step, its last token too
      }
    }
  }
  CHECK(finished > 0);  // prefixes that ended in <eos> were among them
}

TEST_CASE("beam_search with keep_greedy: the greedy sentence the search dropped has a record up to where it was dropped") {
  std::size_t appended = 0, found_by_search = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    attn::manual_seed(seed);
    auto model = tiny_bahdanau(7);
    const Sources s = random_sources(10, 5, 7, 30 + seed);
    DecodeOptions opt;
    opt.max_len = 8;
    const auto greedy = greedy_decode(*model, s.src, s.lengths, opt);
    opt.beam_size = 2;
    opt.n_best = 8;  // every hypothesis, the appended greedy one included
    opt.keep_greedy = true;
    const auto all = beam_search_n_best(*model, s.src, s.lengths, opt);
    for (std::size_t b = 0; b < all.size(); ++b)
      for (const Hypothesis& h : all[b]) {
        if (h.beam.size() < h.tokens.size()) {
          CHECK(h.tokens == greedy[b].tokens);  // only the greedy sentence has a record cut short
          ++appended;
        } else {
          found_by_search += h.tokens == greedy[b].tokens ? 1 : 0;
        }
        REQUIRE(h.beam.size() <= h.tokens.size());
        for (std::size_t t = 0; t < h.beam.size(); ++t) {
          const std::vector<std::int64_t> own(h.tokens.begin(), h.tokens.begin() + static_cast<long>(t) + 1);
          bool found = false;
          for (const auto& kept : h.beam[t]) found = found || kept.first == own;
          CHECK(found);  // every record holds the hypothesis' own prefix
        }
      }
  }
  CHECK(appended > 0);         // the search did drop greedy sentences
  CHECK(found_by_search > 0);  // and found others, which keep their record
}

TEST_CASE("beam_search: exact on a tiny vocabulary when the beam holds every prefix") {
  attn::manual_seed(4);
  auto model = tiny_bahdanau(4);  // ids 0..3, <eos> = 2
  const Sources s = random_sources(3, 3, 4, 14);
  DecodeOptions opt;
  opt.max_len = 3;
  opt.beam_size = 16;  // 4^2 prefixes of length 2: nothing is ever pruned
  opt.keep_greedy = false;
  const auto beam = beam_search(*model, s.src, s.lengths, opt);
  for (std::size_t b = 0; b < 3; ++b) {
    // Brute force: every output that ends in <eos> within 3 tokens, or runs to 3 tokens.
    double best = -INFINITY;
    std::function<void(std::vector<std::int64_t>)> visit = [&](std::vector<std::int64_t> tokens) {
      if (!tokens.empty() && (tokens.back() == 2 || tokens.size() == 3)) {
        best = std::max(best, rescore(*model, s, b, tokens).first);
        return;
      }
      for (std::int64_t v = 0; v < 4; ++v) {
        tokens.push_back(v);
        visit(tokens);
        tokens.pop_back();
      }
    };
    visit({});
    CHECK(beam[b].log_prob == doctest::Approx(best).epsilon(1e-10));
  }
}

TEST_CASE("beam_search_n_best: sorted, distinct, at most n") {
  attn::manual_seed(5);
  auto model = tiny_bahdanau(6);
  const Sources s = random_sources(4, 4, 6, 15);
  DecodeOptions opt;
  opt.beam_size = 4;
  opt.n_best = 3;
  opt.max_len = 6;
  const auto all = beam_search_n_best(*model, s.src, s.lengths, opt);
  REQUIRE(all.size() == 4);
  for (const auto& hyps : all) {
    CHECK(!hyps.empty());
    CHECK(hyps.size() <= 3);
    for (std::size_t i = 1; i < hyps.size(); ++i) {
      CHECK(hyps[i - 1].score >= hyps[i].score);
      CHECK(hyps[i - 1].tokens != hyps[i].tokens);
    }
  }
}

TEST_CASE("length penalties") {
  DecodeOptions opt;
  CHECK(length_normalized_score(-6.0, 3, opt) == -6.0);
  opt.length_penalty = LengthPenalty::Average;
  CHECK(length_normalized_score(-6.0, 3, opt) == -2.0);
  opt.length_penalty = LengthPenalty::GNMT;
  opt.alpha = 1.0;
  CHECK(length_normalized_score(-6.0, 7, opt) == doctest::Approx(-3.0));  // (5 + 7) / 6 = 2
  opt.alpha = 0.0;
  CHECK(length_normalized_score(-6.0, 7, opt) == -6.0);

  // With a penalty, beam search ranks by the penalized score.
  attn::manual_seed(6);
  auto model = tiny_bahdanau(6);
  const Sources s = random_sources(5, 4, 6, 16);
  opt.beam_size = 3;
  opt.max_len = 6;
  opt.alpha = 0.6;
  for (const Hypothesis& h : beam_search(*model, s.src, s.lengths, opt))
    CHECK(h.score == doctest::Approx(length_normalized_score(h.log_prob, h.tokens.size(), opt)));
}

namespace {

// A decoder that reads nothing: its next-token probabilities depend on the last token only.
// Ids: 0 <pad>, 1 <bos>, 2 <eos>, 3 "A", 4 "B". After <bos>: <eos> 0.5, A 0.398, B 0.1;
// after A: <eos> 0.9. So [<eos>] has log p = log 0.5 = -0.693 and [A, <eos>] has
// log 0.398 + log 0.9 = -1.027: without a penalty the short output wins, divided by its
// length (-0.513) the long one does.
class ScriptedModel : public Seq2Seq {
 public:
  ScriptedModel() : Seq2Seq("ScriptedModel") {}
  Tensor forward(const Index&, const std::vector<std::size_t>&, const Index&) override {
    throw std::logic_error("ScriptedModel decodes only");
  }
  DecoderState start(const Index&, const std::vector<std::size_t>& src_lengths) override {
    DecoderState state;
    state.src_lengths = src_lengths;
    return state;
  }
  Tensor step(DecoderState&, const Index& prefix) override {
    const std::size_t rows = prefix.shape()[0], last = prefix.shape()[1] - 1;
    xt::xarray<double> logits = xt::zeros<double>({rows, std::size_t(5)});
    for (std::size_t r = 0; r < rows; ++r) {
      const std::int64_t token = prefix(r, last);
      const std::array<double, 5> p = token == 1   ? std::array<double, 5>{0.001, 0.001, 0.5, 0.398, 0.1}
                                      : token == 3 ? std::array<double, 5>{0.001, 0.001, 0.9, 0.048, 0.05}
                                                   : std::array<double, 5>{0.001, 0.001, 0.3, 0.3, 0.398};
      for (std::size_t v = 0; v < 5; ++v) logits(r, v) = std::log(p[v]);  // each row sums to 1: logits = log p
    }
    return Tensor(std::move(logits));
  }
};

}  // namespace

TEST_CASE("beam_search: a length penalty changes which hypothesis wins") {
  ScriptedModel model;
  const Index src = {{3, 4}};
  const double short_lp = std::log(0.5), long_lp = std::log(0.398) + std::log(0.9);
  DecodeOptions opt;
  opt.beam_size = 2;
  opt.max_len = 4;
  opt.n_best = 2;

  // No penalty: the short output (the search stops there: no live prefix can beat it).
  auto none = beam_search_n_best(model, src, {2}, opt)[0];
  REQUIRE(!none.empty());
  CHECK(none[0].tokens == std::vector<std::int64_t>{2});
  CHECK(none[0].log_prob == doctest::Approx(short_lp).epsilon(1e-12));

  // Average: the long one, ranked by log_prob / |Y|, ahead of the greedy output it beats.
  opt.length_penalty = LengthPenalty::Average;
  auto average = beam_search_n_best(model, src, {2}, opt)[0];
  REQUIRE(average.size() == 2);
  CHECK(average[0].tokens == std::vector<std::int64_t>{3, 2});
  CHECK(average[0].log_prob == doctest::Approx(long_lp).epsilon(1e-12));
  CHECK(average[0].score == doctest::Approx(long_lp / 2).epsilon(1e-12));
  CHECK(average[1].tokens == std::vector<std::int64_t>{2});
  CHECK(average[1].score == doctest::Approx(short_lp).epsilon(1e-12));
  CHECK(greedy_decode(model, src, {2}, opt)[0].tokens == std::vector<std::int64_t>{2});  // greedy stops at once

  // GNMT: alpha 0.6 divides by (7/6)^0.6 = 1.097, too little; alpha 3 by 1.588, enough.
  opt.length_penalty = LengthPenalty::GNMT;
  opt.alpha = 0.6;
  CHECK(beam_search(model, src, {2}, opt)[0].tokens == std::vector<std::int64_t>{2});
  opt.alpha = 3.0;
  const Hypothesis gnmt = beam_search(model, src, {2}, opt)[0];
  CHECK(gnmt.tokens == std::vector<std::int64_t>{3, 2});
  CHECK(gnmt.score == doctest::Approx(long_lp / std::pow(7.0 / 6.0, 3.0)).epsilon(1e-12));
}

TEST_CASE("coverage_score: GNMT's beta * sum_i log min(c_i, 1), by hand") {
  // c = (0.5 + 0.2, 0.5 + 0.3, 0 + 0.5) = (0.7, 0.8, 0.5)
  const xt::xarray<double> a = {{0.5, 0.5, 0.0}, {0.2, 0.3, 0.5}};
  CHECK(coverage_score(a, 3, 1.0) == doctest::Approx(std::log(0.7) + std::log(0.8) + std::log(0.5)).epsilon(1e-12));
  CHECK(coverage_score(a, 3, 0.2) == doctest::Approx(0.2 * (std::log(0.7) + std::log(0.8) + std::log(0.5))).epsilon(1e-12));
  CHECK(coverage_score(a, 2, 1.0) == doctest::Approx(std::log(0.7) + std::log(0.8)).epsilon(1e-12));  // padding ignored
  // Covered more than once counts as 1; never attended as 1e-10.
  const xt::xarray<double> b = {{1.0, 0.0}, {1.0, 0.0}};
  CHECK(coverage_score(b, 2, 1.0) == doctest::Approx(std::log(1e-10)).epsilon(1e-12));
  CHECK(coverage_score(b, 1, 1.0) == 0.0);
  // Heads [T, H, S] are averaged: head 0 gives c = (1, 0), head 1 (0, 1): c = (0.5, 0.5).
  const xt::xarray<double> h = {{{1.0, 0.0}, {0.0, 1.0}}};
  CHECK(coverage_score(h, 2, 1.0) == doctest::Approx(2 * std::log(0.5)).epsilon(1e-12));
  CHECK_THROWS_AS(coverage_score(a, 4, 1.0), attn::ValueError);
  CHECK_THROWS_AS(coverage_score(xt::xarray<double>{1.0, 2.0}, 1, 1.0), attn::ShapeError);
}

TEST_CASE("beam_search with a coverage penalty: the same hypotheses, reranked by score + cp") {
  attn::manual_seed(7);
  auto model = tiny_bahdanau(6);
  const Sources s = random_sources(8, 5, 6, 17);
  DecodeOptions opt;
  opt.beam_size = 4;
  opt.n_best = 8;
  opt.max_len = 8;
  opt.keep_greedy = false;
  opt.length_penalty = LengthPenalty::GNMT;
  const auto plain = beam_search_n_best(*model, s.src, s.lengths, opt);
  opt.coverage_penalty = 3.0;
  const auto covered = beam_search_n_best(*model, s.src, s.lengths, opt);
  std::size_t changed = 0;
  for (std::size_t b = 0; b < plain.size(); ++b) {
    REQUIRE(plain[b].size() == covered[b].size());
    std::vector<std::vector<std::int64_t>> before, after;
    for (const Hypothesis& h : plain[b]) before.push_back(h.tokens);
    for (const Hypothesis& h : covered[b]) {
      after.push_back(h.tokens);
      const double cp = coverage_score(attention_matrix(h, "attention").to_array(), s.lengths[b], 3.0);
      CHECK(cp <= 0.0);
      CHECK(h.score == doctest::Approx(length_normalized_score(h.log_prob, h.tokens.size(), opt) + cp).epsilon(1e-12));
    }
    for (std::size_t i = 1; i < covered[b].size(); ++i) CHECK(covered[b][i - 1].score >= covered[b][i].score);
    changed += before.front() != after.front();
    std::sort(before.begin(), before.end());
    std::sort(after.begin(), after.end());
    CHECK(before == after);  // cp reranks; it does not change which hypotheses finish
  }
  CHECK(changed > 0);  // and the reranking changes some best outputs
  opt.coverage_penalty = -1.0;
  CHECK_THROWS_WITH_AS(beam_search(*model, s.src, s.lengths, opt), doctest::Contains("must be >= 0"), attn::ValueError);
}

TEST_CASE("decoding: Luong with local attention, and max_len stops unfinished outputs") {
  attn::manual_seed(7);
  LuongConfig c;
  c.src_vocab = c.tgt_vocab = 6;
  c.attention = LuongAttention::LocalP;
  LuongSeq2Seq model(c);
  const Sources s = random_sources(4, 5, 6, 17);
  DecodeOptions opt;
  opt.max_len = 2;
  opt.beam_size = 3;
  for (const auto& hyps : {greedy_decode(model, s.src, s.lengths, opt), beam_search(model, s.src, s.lengths, opt)}) {
    for (const Hypothesis& h : hyps) {
      CHECK(h.tokens.size() <= 2);
      if (!h.finished) CHECK(h.tokens.size() == 2);
    }
    check_against_forward(model, s, hyps);
  }
}

TEST_CASE("decoding works for the Transformer, which reads the whole prefix at every step") {
  attn::manual_seed(9);
  TransformerConfig c;
  c.src_vocab = c.tgt_vocab = 6;
  c.d_model = 8;
  c.nhead = 2;
  c.num_encoder_layers = c.num_decoder_layers = 1;
  c.dim_feedforward = 16;
  TransformerSeq2Seq model(c);
  model.eval();  // the re-scoring forward() runs without dropout too
  const Sources s = random_sources(5, 4, 6, 19);
  DecodeOptions opt;
  opt.max_len = 6;
  opt.beam_size = 3;
  const auto greedy = greedy_decode(model, s.src, s.lengths, opt);
  const auto beam = beam_search(model, s.src, s.lengths, opt);
  check_against_forward(model, s, greedy);
  check_against_forward(model, s, beam);
  for (std::size_t b = 0; b < 5; ++b) CHECK(beam[b].log_prob >= greedy[b].log_prob);
  CHECK(beam[0].attention.size() > 1);  // every layer and head besides "attention"
}

TEST_CASE("decoding: bad inputs") {
  attn::manual_seed(8);
  auto model = tiny_bahdanau();
  const Sources s = random_sources(2, 3, 5, 18);
  DecodeOptions opt;
  opt.beam_size = 0;
  CHECK_THROWS_WITH_SUBSTR(beam_search(*model, s.src, s.lengths, opt), attn::ValueError, "beam_size");
  opt.beam_size = 2;
  opt.max_len = 0;
  CHECK_THROWS_WITH_SUBSTR(greedy_decode(*model, s.src, s.lengths, opt), attn::ValueError, "max_len");
  CHECK_THROWS_WITH_SUBSTR(greedy_decode(*model, s.src, {1}), attn::ShapeError, "source lengths");
  CHECK_THROWS_WITH_SUBSTR(beam_search(*model, s.src, {1, 9}), attn::ValueError, "not in 1..3");
}
