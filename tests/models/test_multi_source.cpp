// Translation from several sources (models/multi_source.hpp): PyTorch's values for the whole
// model with each attention (tools/reference/multi_source.py), gradcheck, step() against
// forward(), splitting packed rows, padding, the share of each source, decoding, bad input.
#include "../helpers.hpp"
#include "../reference.hpp"

#include "decode/decode.hpp"
#include "models/multi_source.hpp"
#include "nn/loss.hpp"

#include <xtensor/xview.hpp>

using attn::Index;
using attn::Tensor;
using attn::models::MultiSourceAttention;
using attn::models::MultiSourceConfig;
using attn::models::MultiSourceInit;
using attn::models::MultiSourceSeq2Seq;

namespace {

// The reference cases' sizes: a packed vocabulary of 9 (<sep> = 8), 7 target words, E = 3, H = 4.
MultiSourceConfig tiny_config(MultiSourceAttention attention, MultiSourceInit init) {
  MultiSourceConfig c;
  c.sources = 2;
  c.src_vocab = 9;
  c.tgt_vocab = 7;
  c.sep_id = 8;
  c.embed_dim = 3;
  c.hidden_dim = 4;
  c.attention = attention;
  c.init = init;
  return c;
}

// The batch tools/reference/multi_source.py ran: x1 <sep> x2 rows of [B, S] = [2, 6], each source
// padded in one of them (row 1's first source is one word, row 0's second has two, row 1's one).
struct TinyBatch {
  Index src;                          // [B, S]
  std::vector<std::size_t> lengths;   // B
  Index tgt_in;                       // [B, T] = [2, 4]
  TinyBatch() {
    test::Reference ref("multi_source");
    src = xt::cast<std::int64_t>(ref.array("separate", "src"));
    tgt_in = xt::cast<std::int64_t>(ref.array("separate", "tgt_in"));
    for (double n : ref.array("separate", "lengths")) lengths.push_back(static_cast<std::size_t>(n));
  }
};

void check_against_reference(MultiSourceAttention attention, MultiSourceInit init, const std::string& name) {
  test::Reference ref("multi_source");
  MultiSourceSeq2Seq model(tiny_config(attention, init));
  for (auto& [param, p] : model.state()) *p = ref.tensor(name, param, /*requires_grad=*/true);
  TinyBatch b;
  Tensor logits = model.forward(b.src, b.lengths, b.tgt_in);
  CHECK(test::allclose(logits, ref.tensor(name, "logits"), 1e-12));
  CHECK(test::allclose(model.last_attention().at("source.0"), ref.tensor(name, "attention0"), 1e-12));
  CHECK(test::allclose(model.last_attention().at("source.1"), ref.tensor(name, "attention1"), 1e-12));
  CHECK(test::allclose(model.last_attention().at("share"), ref.tensor(name, "share"), 1e-12));
  attn::sum(logits * ref.tensor(name, "r")).backward();
  for (const auto& [param, p] : model.named_parameters()) {
    INFO("grad of " << param);
    CHECK(test::allclose(p.grad(), ref.tensor(name, "grad_" + param), 1e-12));
  }
}

double max_step_forward_difference(MultiSourceSeq2Seq& model, const TinyBatch& b) {
  const xt::xarray<double> full = model.forward(b.src, b.lengths, b.tgt_in).to_array();  // [B, T, V]
  attn::models::DecoderState state = model.start(b.src, b.lengths);
  double worst = 0.0;
  for (std::size_t t = 0; t < b.tgt_in.shape()[1]; ++t) {
    Index prefix = xt::view(b.tgt_in, xt::all(), xt::range(0, t + 1));  // [B, t + 1]
    const xt::xarray<double> logits = model.step(state, prefix).to_array();
    worst = std::max(worst, xt::amax(xt::abs(logits - xt::view(full, xt::all(), t, xt::all())))());
  }
  return worst;
}

}  // namespace

TEST_CASE("MultiSourceSeq2Seq, separate attentions and child-sum, equals the same model in PyTorch") {
  check_against_reference(MultiSourceAttention::Separate, MultiSourceInit::ChildSum, "separate");
}

TEST_CASE("MultiSourceSeq2Seq, one flat attention and basic, equals the same model in PyTorch") {
  check_against_reference(MultiSourceAttention::Flat, MultiSourceInit::Basic, "flat");
}

TEST_CASE("MultiSourceSeq2Seq: gradcheck of the loss over every parameter, both attentions") {
  for (MultiSourceAttention attention : {MultiSourceAttention::Separate, MultiSourceAttention::Flat}) {
    INFO("attention " << attn::models::multi_source_attention_name(attention));
    attn::manual_seed(1);
    MultiSourceConfig c = tiny_config(attention, MultiSourceInit::ChildSum);
    c.hidden_dim = 3;
    MultiSourceSeq2Seq model(c);
    TinyBatch b;
    const Index targets = {3, 4, 5, 2, 5, 6, 2, 2};  // tgt_out of both rows: [B * T]
    std::vector<Tensor> inputs = test::with_parameters(model, {});
    CHECK_GRADCHECK(
        [&](const std::vector<Tensor>&) {
          return attn::nn::cross_entropy(attn::reshape(model.forward(b.src, b.lengths, b.tgt_in), {8, 7}), targets);
        },
        inputs);
  }
}

TEST_CASE("MultiSourceSeq2Seq: step() one word at a time gives forward()'s logits") {
  for (MultiSourceAttention attention : {MultiSourceAttention::Separate, MultiSourceAttention::Flat})
    for (MultiSourceInit init : {MultiSourceInit::Basic, MultiSourceInit::ChildSum}) {
      attn::manual_seed(2);
      MultiSourceSeq2Seq model(tiny_config(attention, init));
      CHECK(max_step_forward_difference(model, TinyBatch{}) < 1e-12);
    }
}

TEST_CASE("MultiSourceSeq2Seq: a row translates the same alone and padded in a batch") {
  for (MultiSourceAttention attention : {MultiSourceAttention::Separate, MultiSourceAttention::Flat}) {
    INFO("attention " << attn::models::multi_source_attention_name(attention));
    attn::manual_seed(3);
    MultiSourceSeq2Seq model(tiny_config(attention, MultiSourceInit::ChildSum));
    TinyBatch b;
    REQUIRE(b.src(1, 1) == 8);  // row 1 is x1 <sep> x2 = 2 <sep> 5, both sources shorter than row 0's
    Tensor logits = model.forward(b.src, b.lengths, b.tgt_in);
    Tensor single = model.forward(Index{{2, 8, 5}}, {3}, xt::view(b.tgt_in, xt::range(1, 2), xt::all()));
    CHECK(test::allclose(attn::narrow(logits, 0, 1, 1), single, 1e-13));
  }
}

TEST_CASE("MultiSourceSeq2Seq: with one source, the flat and the separate attention are one model") {
  MultiSourceConfig c = tiny_config(MultiSourceAttention::Separate, MultiSourceInit::Basic);
  c.sources = 1;  // sep_id stays 8: with one source it is an ordinary word
  attn::manual_seed(4);
  MultiSourceSeq2Seq separate(c);
  c.attention = MultiSourceAttention::Flat;
  MultiSourceSeq2Seq flat(c);
  std::map<std::string, Tensor> from;
  for (const auto& [name, p] : separate.state()) from[name] = p->detach();
  for (auto& [name, p] : flat.state()) *p = from.at(name);
  Index src = {{3, 4, 5}, {2, 8, 0}};  // 8 is an ordinary word with one source
  Index tgt_in = {{1, 3}, {1, 5}};
  CHECK(test::allclose(separate.forward(src, {3, 2}, tgt_in), flat.forward(src, {3, 2}, tgt_in), 1e-14));
}

TEST_CASE("MultiSourceSeq2Seq: each source's weights and shares") {
  for (MultiSourceAttention attention : {MultiSourceAttention::Separate, MultiSourceAttention::Flat}) {
    INFO("attention " << attn::models::multi_source_attention_name(attention));
    attn::manual_seed(5);
    MultiSourceSeq2Seq model(tiny_config(attention, MultiSourceInit::ChildSum));
    TinyBatch b;
    model.forward(b.src, b.lengths, b.tgt_in);
    const auto a = model.last_attention();
    const xt::xarray<double> a0 = a.at("source.0").to_array(), a1 = a.at("source.1").to_array();  // [B, T, S_k]
    const xt::xarray<double> share = a.at("share").to_array();                                      // [B, T, 2]
    CHECK(a0.shape() == std::vector<std::size_t>{2, 4, 3});
    CHECK(a1.shape() == std::vector<std::size_t>{2, 4, 2});
    CHECK(share.shape() == std::vector<std::size_t>{2, 4, 2});
    for (std::size_t t = 0; t < 4; ++t) {
      CHECK(a0(1, t, 1) == 0.0);  // row 1's first source is one word long
      CHECK(a1(1, t, 1) == 0.0);  // and so is its second
      CHECK(share(0, t, 0) + share(0, t, 1) == doctest::Approx(1.0).epsilon(1e-14));
      CHECK(share(0, t, 0) > 0.0);
      const double mass0 = a0(0, t, 0) + a0(0, t, 1) + a0(0, t, 2);
      if (attention == MultiSourceAttention::Flat) CHECK(share(0, t, 0) == doctest::Approx(mass0).epsilon(1e-14));
      else CHECK(mass0 == doctest::Approx(1.0).epsilon(1e-14));
    }
  }
}

TEST_CASE("MultiSourceSeq2Seq: the separate model's share is |W_c^k c^k| over their sum, read off the step") {
  attn::manual_seed(8);
  MultiSourceSeq2Seq model(tiny_config(MultiSourceAttention::Separate, MultiSourceInit::Basic));
  TinyBatch b;
  attn::models::DecoderState state = model.start(b.src, b.lengths);
  const Index bos = xt::ones<std::int64_t>({std::size_t(2), std::size_t(1)});  // [B, 1]: <bos> = 1
  model.step(state, bos);
  const std::size_t H = 4;
  const xt::xarray<double> W = model.combine.weight.to_array();  // [H, 3H]: reads [c^1; c^2; s_t]
  const xt::xarray<double> share = state.attention.at("share").to_array();  // [B, 2]
  for (std::size_t row = 0; row < 2; ++row) {
    double norms[2];
    for (std::size_t k = 0; k < 2; ++k) {
      const xt::xarray<double> a = state.attention.at("source." + std::to_string(k)).to_array();  // [B, S_k]
      const xt::xarray<double> h = state.tensors.at("memory." + std::to_string(k)).to_array();    // [B, S_k, H]
      double n2 = 0;
      for (std::size_t i = 0; i < H; ++i) {
        double v = 0;
        for (std::size_t d = 0; d < H; ++d)
          for (std::size_t j = 0; j < a.shape()[1]; ++j) v += W(i, k * H + d) * a(row, j) * h(row, j, d);
        n2 += v * v;
      }
      norms[k] = std::sqrt(n2);
    }
    CHECK(share(row, 0) == doctest::Approx(norms[0] / (norms[0] + norms[1])).epsilon(1e-12));
  }
  // W_c zeroed: no source moves ~s_t, and each shares 0 (not 0 / 0)
  model.combine.weight = attn::zeros_like(model.combine.weight);
  model.step(state, bos);
  const xt::xarray<double> none = state.attention.at("share").to_array();  // [B, 2]
  CHECK(xt::all(xt::equal(none, 0.0)));
}

TEST_CASE("split_sources cuts packed rows at <sep>, and names a row that cannot be cut") {
  TinyBatch b;
  attn::models::SplitSources s = attn::models::split_sources(b.src, b.lengths, 8, 2);
  CHECK(s.ids[0] == Index{{3, 4, 5}, {2, 0, 0}});
  CHECK(s.ids[1] == Index{{6, 7}, {5, 0}});
  CHECK(s.lengths == std::vector<std::vector<std::size_t>>{{3, 1}, {2, 1}});
  CHECK_THROWS_WITH_SUBSTR(attn::models::split_sources(Index{{3, 4, 5}}, {3}, 8, 2), attn::ValueError,
                           "row 0 has 0 separators (id 8), expected 1 between its 2 sources");
  CHECK_THROWS_WITH_SUBSTR(attn::models::split_sources(Index{{3, 8, 4, 8, 5}}, {5}, 8, 2), attn::ValueError,
                           "row 0 has 2 separators");
  CHECK_THROWS_WITH_SUBSTR(attn::models::split_sources(Index{{3, 8, 4}, {8, 5, 0}}, {3, 2}, 8, 2), attn::ValueError,
                           "row 1 has an empty source 0");
  CHECK_THROWS_WITH_SUBSTR(attn::models::split_sources(Index{{3, 8}}, {2}, 8, 2), attn::ValueError,
                           "row 0 has an empty source 1");
}

TEST_CASE("MultiSourceSeq2Seq: greedy and beam decoding through the Seq2Seq interface") {
  attn::manual_seed(6);
  MultiSourceSeq2Seq model(tiny_config(MultiSourceAttention::Separate, MultiSourceInit::ChildSum));
  TinyBatch b;
  attn::models::DecodeOptions opt;
  opt.max_len = 5;
  auto greedy = attn::models::greedy_decode(model, b.src, b.lengths, opt);
  REQUIRE(greedy.size() == 2);
  CHECK(greedy[0].attention.at("source.1").size() == greedy[0].tokens.size());
  CHECK(greedy[0].attention.at("share").size() == greedy[0].tokens.size());
  // Beam search reorders every state tensor (memory.k, keys.k, valid.k, h, c, feed) as its
  // hypotheses move between rows; without the greedy fallback, each of the 3 best sentences it
  // keeps must have the log-probability the model gives it teacher-forced, one row alone. (A
  // length penalty keeps the search going to 3 endings: without one it may stop at the first.)
  opt.beam_size = 3;
  opt.n_best = 3;
  opt.max_len = 8;
  opt.keep_greedy = false;
  opt.length_penalty = attn::models::LengthPenalty::Average;
  for (auto& [name, p] : model.state()) *p = *p * 4.0;  // peaked distributions: hypotheses change rows
  auto beams = attn::models::beam_search_n_best(model, b.src, b.lengths, opt);
  REQUIRE(beams.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    REQUIRE(beams[i].size() == 3);
    for (const auto& hypothesis : beams[i]) {
      const auto& tokens = hypothesis.tokens;
      REQUIRE(!tokens.empty());
      Index src = xt::view(b.src, xt::range(i, i + 1), xt::range(0, b.lengths[i]));  // [1, S_i]
      Index tgt_in = xt::zeros<std::int64_t>({std::size_t{1}, tokens.size()});       // [1, T]: <bos> + tokens[:-1]
      tgt_in(0, 0) = opt.bos_id;
      for (std::size_t t = 1; t < tokens.size(); ++t) tgt_in(0, t) = tokens[t - 1];
      const xt::xarray<double> logp = attn::log_softmax(model.forward(src, {b.lengths[i]}, tgt_in), -1).to_array();
      double teacher_forced = 0.0;
      for (std::size_t t = 0; t < tokens.size(); ++t) teacher_forced += logp(0, t, tokens[t]);
      INFO("row " << i << ", " << tokens.size() << " tokens");
      CHECK(hypothesis.log_prob == doctest::Approx(teacher_forced).epsilon(1e-9));
    }
  }
  // GNMT's coverage penalty reads the main attention ("source.0") with state.src_lengths: they
  // must describe the same source, the first, not the packed row.
  opt.coverage_penalty = 0.2;
  auto covered = attn::models::beam_search(model, b.src, b.lengths, opt);
  REQUIRE(covered.size() == 2);
  CHECK(std::isfinite(covered[0].score));
}

TEST_CASE("MultiSourceSeq2Seq: bad input is named") {
  MultiSourceConfig c = tiny_config(MultiSourceAttention::Separate, MultiSourceInit::ChildSum);
  c.sep_id = -1;
  CHECK_THROWS_WITH_SUBSTR(MultiSourceSeq2Seq{c}, attn::ValueError, "2 sources need sep_id");
  c.sep_id = 9;
  CHECK_THROWS_WITH_SUBSTR(MultiSourceSeq2Seq{c}, attn::ValueError, "(0..8), got 9");
  c.sep_id = attn::data::Vocab::unk_id;  // what packed_vocab.id("<sep>") gives when <sep> is missing
  CHECK_THROWS_WITH_SUBSTR(MultiSourceSeq2Seq{c}, attn::ValueError, "is a special id");
  c = tiny_config(MultiSourceAttention::Flat, MultiSourceInit::Basic);
  c.hidden_dim = 0;
  CHECK_THROWS_WITH_SUBSTR(MultiSourceSeq2Seq{c}, attn::ValueError, "every size in the config must be positive");
  MultiSourceSeq2Seq model(tiny_config(MultiSourceAttention::Flat, MultiSourceInit::Basic));
  TinyBatch b;
  CHECK_THROWS_WITH_SUBSTR(model.forward(Index{{3, 4, 5}}, {3}, Index{{1, 2}}), attn::ValueError, "row 0 has 0 separators");
  CHECK_THROWS_WITH_SUBSTR(model.forward(b.src, {6}, b.tgt_in), attn::ShapeError, "expected 2 source lengths");
  CHECK_THROWS_WITH_SUBSTR(attn::models::multi_source_attention_from_name("both"), attn::ValueError, "choices: separate, flat");
  CHECK_THROWS_WITH_SUBSTR(attn::models::multi_source_init_from_name("sum"), attn::ValueError, "choices: basic, child-sum");
  CHECK(attn::models::multi_source_init_from_name("child-sum") == MultiSourceInit::ChildSum);
}
