#include "../helpers.hpp"

#include "decode/decode.hpp"
#include "models/transformer_seq2seq.hpp"

#include <functional>
#include <xtensor/xview.hpp>

using attn::Index;
using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace models = attn::models;
namespace nn = attn::nn;

namespace {

// A tiny model: d_model 4, 2 heads, ff 8, vocabulary 7 (4 specials + 3 symbols).
models::TransformerConfig tiny(bool tied, bool learned, bool norm_first) {
  models::TransformerConfig c;
  c.src_vocab = c.tgt_vocab = 7;
  c.d_model = 4;
  c.nhead = 2;
  c.num_encoder_layers = 1;
  c.num_decoder_layers = 2;
  c.dim_feedforward = 8;
  c.dropout = 0.0;
  c.tie_weights = tied;
  c.learned_positions = learned;
  c.norm_first = norm_first;
  c.max_len = 16;
  return c;
}

// B = 2 sources of lengths 3 and 2 (padded with <pad> = 0), targets of length 3.
const Index kSrc = {{4, 5, 6}, {6, 4, 0}};
const std::vector<std::size_t> kLengths = {3, 2};
const Index kTgtIn = {{1, 5, 4}, {1, 6, 6}};

// The states of a decode run with the KV cache and of one without it.
// Two targets of 6 tokens, for step-by-step checks.
const Index kSteps = {{1, 5, 4, 6, 5, 4}, {1, 6, 6, 4, 4, 5}};

struct CachedAndPlain {
  models::DecoderState cached, plain;
};

// Decodes `tgt` [B, T] prefix by prefix with the KV cache and without it, checking that the
// logits agree at each step, and every attention map too unless `maps` is false (a windowed
// cache's maps cover only the window's keys); each_step(t, cached) adds checks of the cached
// state after step t. Returns both states, to go on from.
CachedAndPlain check_steps_with_cache(
    models::TransformerSeq2Seq& model, const Index& tgt, bool maps = true,
    const std::function<void(std::size_t, const models::DecoderState&)>& each_step = nullptr) {
  CachedAndPlain s{model.start(kSrc, kLengths), model.start(kSrc, kLengths)};
  for (std::size_t t = 0; t < tgt.shape(1); ++t) {
    CAPTURE(t);
    Index prefix = xt::view(tgt, xt::all(), xt::range(0, t + 1));
    model.use_kv_cache = true;
    auto with = model.step(s.cached, prefix).to_array();
    model.use_kv_cache = false;
    CHECK(xt::allclose(with, model.step(s.plain, prefix).to_array(), 0.0, 1e-12));
    for (const auto& [name, w] : maps ? s.plain.attention : std::map<std::string, Tensor>{}) {
      CAPTURE(name);
      CHECK(xt::allclose(s.cached.attention.at(name).to_array(), w.to_array(), 0.0, 1e-12));
    }
    if (each_step) each_step(t, s.cached);
  }
  return s;
}

}  // namespace

TEST_CASE("TransformerSeq2Seq: shapes, parameter names and the attention of every layer and head") {
  attn::manual_seed(1);
  models::TransformerSeq2Seq model(tiny(false, false, false));
  Tensor logits = model.forward(kSrc, kLengths, kTgtIn);
  CHECK(logits.shape() == attn::Shape{2, 3, 7});
  auto att = model.last_attention();
  CHECK(att.size() == 1 + 2 * 2 + 1);
  CHECK(att.at("encoder.0.self").shape() == attn::Shape{2, 2, 3, 3});
  // "attention": the last layer's cross-attention averaged over its heads, [B, T, S].
  CHECK(att.at("attention").shape() == attn::Shape{2, 3, 3});
  CHECK(test::allclose(att.at("attention"), attn::mean(att.at("decoder.1.cross"), {1}), 1e-15));
  CHECK(att.at("decoder.1.self").shape() == attn::Shape{2, 2, 3, 3});
  CHECK(att.at("decoder.0.cross").shape() == attn::Shape{2, 2, 3, 3});
  CHECK(model.main_attention() == "attention");
  // Sentence 1 has 2 source tokens: no head of any layer reads its padding.
  for (const char* name : {"decoder.0.cross", "decoder.1.cross"})
    CHECK(xt::all(xt::equal(xt::view(att.at(name).to_array(), 1, xt::all(), xt::all(), 2), 0.0)));
  // Causal: decoder self-attention is lower triangular.
  auto self = att.at("decoder.0.self").to_array();
  CHECK(self(0, 1, 0, 1) == 0.0);
  CHECK(self(0, 1, 1, 2) == 0.0);
  CHECK(self(0, 1, 2, 0) > 0.0);

  std::vector<std::string> names;
  for (const auto& entry : model.named_parameters()) names.push_back(entry.first);
  CHECK(std::count(names.begin(), names.end(), "transformer.decoder.layers.1.multihead_attn.in_proj_weight") == 1);
  CHECK(std::count(names.begin(), names.end(), "out.weight") == 1);
  models::TransformerSeq2Seq tied(tiny(true, true, false));
  CHECK(tied.out == nullptr);
  CHECK(tied.num_parameters() == model.num_parameters() - (7 * 4 + 7) + 16 * 4);  // no out layer, + learned positions
}

TEST_CASE("TransformerSeq2Seq passes gradcheck end to end (post-norm untied, pre-norm tied with learned positions)") {
  for (bool variant : {false, true}) {
    INFO("tied / learned / norm_first: " << variant);
    attn::manual_seed(2);
    models::TransformerSeq2Seq model(tiny(variant, variant, variant));
    CHECK_GRADCHECK([&](const Inputs&) { return model.forward(kSrc, kLengths, kTgtIn); }, model.parameters());
  }
}

TEST_CASE("TransformerSeq2Seq: a later target token changes no earlier logits") {
  attn::manual_seed(3);
  models::TransformerSeq2Seq model(tiny(false, false, false));
  Index tgt = {{1, 5, 4, 6, 5}, {1, 6, 6, 4, 4}};
  auto before = model.forward(kSrc, kLengths, tgt).to_array();
  tgt(0, 3) = 4;
  tgt(1, 3) = 5;
  auto after = model.forward(kSrc, kLengths, tgt).to_array();
  CHECK(xt::allclose(xt::view(before, xt::all(), xt::range(0, 3)), xt::view(after, xt::all(), xt::range(0, 3)), 0.0,
                     0.0));
  CHECK_FALSE(xt::allclose(xt::view(before, xt::all(), 3), xt::view(after, xt::all(), 3)));
  // Padding in the source: what sits in a padded position changes nothing.
  Index other_pad = kSrc;
  other_pad(1, 2) = 5;
  auto same = model.forward(other_pad, kLengths, tgt).to_array();
  CHECK(xt::allclose(after, same, 0.0, 1e-12));
}

TEST_CASE("TransformerSeq2Seq: step-by-step decoding gives forward()'s logits and attention (1e-10)") {
  attn::manual_seed(4);
  models::TransformerConfig c = tiny(false, false, false);
  c.dropout = 0.3;  // eval mode turns it off
  models::TransformerSeq2Seq model(c);
  model.eval();
  Index tgt = {{1, 5, 4, 6}, {1, 6, 6, 4}};
  auto logits = model.forward(kSrc, kLengths, tgt).to_array();  // [2, 4, 7]
  auto att = model.last_attention();
  models::DecoderState state = model.start(kSrc, kLengths);
  CHECK(state.tensors.at("memory").shape() == attn::Shape{2, 3, 4});
  for (std::size_t t = 0; t < 4; ++t) {
    INFO("step " << t);
    Index prefix = xt::view(tgt, xt::all(), xt::range(0, t + 1));
    auto step = model.step(state, prefix).to_array();  // [2, 7]
    CHECK(xt::allclose(step, xt::view(logits, xt::all(), t), 0.0, 1e-10));
    CHECK(xt::allclose(state.attention.at("attention").to_array(), xt::view(att.at("attention").to_array(), xt::all(), t),
                       0.0, 1e-10));
    for (const char* name : {"decoder.0.cross", "decoder.1.cross", "decoder.1.self"}) {
      INFO(name);
      auto full = att.at(name).to_array();  // [B, H, T, Tk]
      auto row = state.attention.at(name).to_array();
      const std::size_t width = std::string(name).find("self") != std::string::npos ? t + 1 : 3;
      CHECK(row.shape() == std::vector<std::size_t>{2, 2, width});
      CHECK(xt::allclose(row, xt::view(full, xt::all(), xt::all(), t, xt::range(0, width)), 0.0, 1e-10));
    }
  }
}

TEST_CASE("TransformerSeq2Seq decodes greedily and with beam search; attention per step for every layer") {
  attn::manual_seed(5);
  models::TransformerSeq2Seq model(tiny(true, false, false));
  models::DecodeOptions opt;
  opt.max_len = 5;
  auto greedy = models::greedy_decode(model, kSrc, kLengths, opt);
  REQUIRE(greedy.size() == 2);
  REQUIRE(!greedy[0].tokens.empty());
  CHECK(greedy[0].attention.count("decoder.1.cross") == 1);
  CHECK(models::attention_matrix(greedy[0], "attention").shape() == attn::Shape{greedy[0].tokens.size(), 3});
  CHECK(models::attention_matrix(greedy[0], "decoder.0.cross").shape() ==
        attn::Shape{greedy[0].tokens.size(), 2, 3});
  CHECK(model.is_training());  // decoding restores the mode
  opt.beam_size = 3;
  opt.length_penalty = models::LengthPenalty::None;
  auto beam = models::beam_search(model, kSrc, kLengths, opt);
  REQUIRE(beam.size() == 2);
  for (std::size_t b = 0; b < 2; ++b) CHECK(beam[b].log_prob >= greedy[b].log_prob - 1e-9);
}

TEST_CASE("TransformerSeq2Seq: step() with the KV cache gives the logits and attention of step() without it") {
  for (const auto& [learned, norm_first] : std::vector<std::pair<bool, bool>>{{false, false}, {true, true}}) {
    CAPTURE(learned);
    CAPTURE(norm_first);
    attn::manual_seed(6);
    models::TransformerSeq2Seq model(tiny(false, learned, norm_first));
    model.eval();
    auto [cached, plain] = check_steps_with_cache(model, Index{{1, 5, 4, 6, 5}, {1, 6, 6, 4, 4}});
    CHECK(cached.tensors.at("kv.0.self.key").shape() == attn::Shape{2, 2, 5, 2});
    // A prefix that does not extend the cached one (an earlier token changed) is recomputed.
    model.use_kv_cache = true;
    Index other = {{1, 4, 4, 6, 5, 6}, {1, 6, 5, 4, 4, 6}};
    auto with = model.step(cached, other).to_array();
    model.use_kv_cache = false;
    CHECK(xt::allclose(with, model.step(plain, other).to_array(), 0.0, 1e-12));
  }
}

TEST_CASE("TransformerSeq2Seq: greedy and beam search write the same tokens with and without the KV cache") {
  attn::manual_seed(7);
  models::TransformerSeq2Seq model(tiny(false, false, false));
  models::DecodeOptions opt;
  opt.max_len = 8;
  for (std::size_t beam : {1, 3}) {
    CAPTURE(beam);
    opt.beam_size = beam;
    model.use_kv_cache = true;
    auto with = beam == 1 ? models::greedy_decode(model, kSrc, kLengths, opt) : models::beam_search(model, kSrc, kLengths, opt);
    model.use_kv_cache = false;
    auto without = beam == 1 ? models::greedy_decode(model, kSrc, kLengths, opt) : models::beam_search(model, kSrc, kLengths, opt);
    REQUIRE(with.size() == without.size());
    for (std::size_t b = 0; b < with.size(); ++b) {
      CHECK(with[b].tokens == without[b].tokens);
      CHECK(with[b].log_prob == doctest::Approx(without[b].log_prob).epsilon(1e-12));
    }
  }
}

TEST_CASE("TransformerSeq2Seq: the paper's configuration is constructible") {
  attn::Generator gen(0);
  models::TransformerSeq2Seq model(models::TransformerConfig::paper(100, 120), gen);
  // nn::Transformer's 44,140,544 + embeddings (100 + 120) x 512 + output layer 512 x 120 + 120.
  CHECK(model.num_parameters() == 44140544 + 220 * 512 + 512 * 120 + 120);
  CHECK(model.transformer.encoder.layers.size() == 6);
  CHECK(model.transformer.decoder.layers[5].multihead_attn.num_heads == 8);
}

TEST_CASE("TransformerSeq2Seq: bad inputs throw") {
  models::TransformerSeq2Seq model(tiny(false, false, false));
  models::TransformerConfig bad = tiny(false, false, false);
  bad.src_vocab = 0;
  CHECK_THROWS_WITH_SUBSTR(models::TransformerSeq2Seq{bad}, attn::ValueError, "must be positive");
  bad = tiny(false, false, false);
  bad.nhead = 3;
  CHECK_THROWS_WITH_SUBSTR(models::TransformerSeq2Seq{bad}, attn::ValueError, "multiple of num_heads");
  models::DecoderState state = model.start(kSrc, kLengths);
  const Index three_rows = xt::ones<std::int64_t>({3, 1});
  CHECK_THROWS_WITH_SUBSTR(model.step(state, three_rows), attn::ShapeError,
                           "expected prefix [2, t] with t >= 1, got [3, 1]");
  const std::vector<std::size_t> one_length = {3};
  CHECK_THROWS_AS(model.forward(kSrc, one_length, kTgtIn), attn::Error);
}

TEST_CASE("TransformerSeq2Seq trains in float32") {
  attn::manual_seed(6);
  models::TransformerSeq2Seq model(tiny(true, false, true));
  model.to(attn::Dtype::Float32);
  Tensor logits = model.forward(kSrc, kLengths, kTgtIn);
  CHECK(logits.dtype() == attn::Dtype::Float32);
  attn::sum(logits).backward();
  CHECK(model.tgt_embed.weight.grad().defined());
  CHECK(model.transformer.encoder.layers[0].linear1.weight.grad().dtype() == attn::Dtype::Float32);
}

namespace {

// d_model 8, 4 heads of 2; the decoder's key-value heads and self-attention window as given.
models::TransformerConfig grouped(std::size_t num_kv_heads, std::size_t window) {
  models::TransformerConfig c = tiny(false, false, false);
  c.d_model = 8;
  c.nhead = 4;
  c.num_kv_heads = num_kv_heads;
  c.window = window;
  return c;
}

}  // namespace

TEST_CASE("TransformerSeq2Seq: grouped-query and multi-query decoders, the encoder's heads left whole") {
  for (std::size_t kv : {2, 1}) {
    CAPTURE(kv);
    attn::manual_seed(3);
    models::TransformerSeq2Seq model(grouped(kv, 0));
    std::map<std::string, Tensor> params;
    for (const auto& [name, p] : model.named_parameters()) params[name] = p;
    // Decoder: queries 8 rows, then kv heads x 2 rows for keys and as many for values.
    for (const char* attention : {"self_attn", "multihead_attn"})
      CHECK(params.at(std::string("transformer.decoder.layers.1.") + attention + ".in_proj_weight").shape() ==
            attn::Shape{8 + 2 * kv * 2, 8});
    CHECK(params.at("transformer.encoder.layers.0.self_attn.in_proj_weight").shape() == attn::Shape{24, 8});
    CHECK(model.transformer.decoder.layers[1].self_attn.num_kv_heads == kv);
    model.eval();
    models::DecoderState state = model.start(kSrc, kLengths);
    model.step(state, Index{{1, 5}, {1, 6}});
    CHECK(state.tensors.at("kv.1.self.key").shape() == attn::Shape{2, kv, 2, 2});   // [B, H_kv, t, d]
    CHECK(state.tensors.at("kv.1.cross.key").shape() == attn::Shape{2, kv, 3, 2});  // [B, H_kv, S, d]
  }
  auto config = attn::models::default_model_config("transformer");
  config["num_kv_heads"] = 2;
  config["window"] = 3;
  auto made = attn::models::make_model(config, 9, 9);
  auto& t = dynamic_cast<models::TransformerSeq2Seq&>(*made);
  CHECK(t.config.num_kv_heads == 2);
  CHECK(t.transformer.decoder.layers[0].self_attn.num_kv_heads == 2);
  CHECK(t.transformer.decoder.layers[1].self_attn.window == 3);
  CHECK(t.transformer.encoder.layers[0].self_attn.window == 0);
  // A stack's layers are copies of its prototype: key-value heads and window included.
  nn::TransformerDecoderLayer proto(8, 4, nn::GroupedQuery{2}, 16, 0.0);
  proto.self_attn.window = 3;
  proto.self_attn.position = nn::AttentionPosition::ALiBi;
  nn::TransformerDecoder stack(proto, 2);
  CHECK(stack.layers[1].self_attn.window == 3);
  CHECK(stack.layers[1].self_attn.position == nn::AttentionPosition::ALiBi);
  CHECK(stack.layers[1].multihead_attn.num_kv_heads == 2);
  models::TransformerConfig bad = grouped(3, 0);
  CHECK_THROWS_WITH_SUBSTR(models::TransformerSeq2Seq{bad}, attn::ValueError, "num_kv_heads (3) must divide nhead (4)");
}

TEST_CASE("TransformerSeq2Seq with multi-query attention and a window passes gradcheck") {
  attn::manual_seed(4);
  models::TransformerSeq2Seq model(grouped(1, 2));
  CHECK_GRADCHECK([&](const Inputs&) { return model.forward(kSrc, kLengths, kTgtIn); }, model.parameters());
}

TEST_CASE("TransformerSeq2Seq: grouped and windowed decoders step with the cache as without it") {
  for (const auto& [kv, window] : std::vector<std::pair<std::size_t, std::size_t>>{{2, 0}, {1, 2}, {4, 3}}) {
    CAPTURE(kv);
    CAPTURE(window);
    attn::manual_seed(6);
    models::TransformerSeq2Seq model(grouped(kv, window));
    model.eval();
    check_steps_with_cache(model, kSteps, window == 0, [kv = kv, window = window](std::size_t t, const models::DecoderState& cached) {
      // The cache holds the last `window` positions at most.
      const std::size_t kept = window ? std::min(t + 1, window) : t + 1;
      CHECK(cached.tensors.at("kv.0.self.key").shape() == attn::Shape{2, kv, kept, 2});
    });
  }
}

TEST_CASE("TransformerSeq2Seq: with a window W, L decoder layers see the last L (W - 1) + 1 positions") {
  // Two decoder layers, W = 2: position 4's logits read positions 2..4, not 0 or 1.
  attn::manual_seed(5);
  models::TransformerSeq2Seq model(grouped(4, 2));
  model.eval();
  const Index a = {{1, 5, 4, 6, 5}, {1, 6, 6, 4, 4}}, far = {{1, 6, 4, 6, 5}, {1, 4, 6, 4, 4}},
              near = {{1, 5, 6, 6, 5}, {1, 6, 5, 4, 4}};
  auto last = [&](const Index& tgt) { return xt::eval(xt::view(model.forward(kSrc, kLengths, tgt).to_array(), xt::all(), 4)); };
  CHECK(xt::allclose(last(a), last(far), 0.0, 1e-14));  // position 1 changed: out of reach
  CHECK(xt::amax(xt::abs(last(a) - last(near)))() > 1e-6);  // position 2 changed: within reach
}

TEST_CASE("TransformerSeq2Seq with rotary or ALiBi positions: gradcheck, and step() with the cache as without it") {
  for (auto position : {nn::AttentionPosition::Rotary, nn::AttentionPosition::ALiBi}) {
    CAPTURE(int(position));
    models::TransformerConfig c = grouped(4, 0);
    c.add_positions = false;
    c.attention_position = position;
    attn::manual_seed(8);
    models::TransformerSeq2Seq model(c);
    CHECK(model.named_parameters().size() == models::TransformerSeq2Seq(grouped(4, 0)).named_parameters().size());
    CHECK(model.transformer.encoder.layers[0].self_attn.position == position);
    CHECK(model.transformer.decoder.layers[1].self_attn.position == position);
    CHECK(model.transformer.decoder.layers[1].multihead_attn.position == nn::AttentionPosition::None);
    CHECK_GRADCHECK([&](const Inputs&) { return model.forward(kSrc, kLengths, kTgtIn); }, model.parameters());
    model.eval();
    check_steps_with_cache(model, kSteps);
  }
  auto config = attn::models::default_model_config("transformer");
  config["add_positions"] = false;
  config["attention_position"] = "alibi";
  auto made = attn::models::make_model(config, 9, 9);
  auto& t = dynamic_cast<models::TransformerSeq2Seq&>(*made);
  CHECK_FALSE(t.config.add_positions);
  CHECK(t.transformer.encoder.layers[1].self_attn.position == nn::AttentionPosition::ALiBi);
  config["attention_position"] = "relative";
  CHECK_THROWS_WITH_SUBSTR(attn::models::make_model(config, 9, 9), attn::ValueError,
                           "attention_position must be none, rotary or alibi, got 'relative'");
}
