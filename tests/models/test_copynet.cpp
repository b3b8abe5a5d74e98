// CopyNet (models/copynet.hpp): PyTorch's values (tools/reference/copynet.py, written step by step
// from the paper's equations), gradcheck, step() against forward(), the one softmax as a distribution
// over the extended vocabulary, learning to copy words the target vocabulary lacks, bad input.
#include "../helpers.hpp"
#include "../reference.hpp"

#include "models/bahdanau.hpp"
#include "models/copynet.hpp"
#include "models/registry.hpp"
#include "nn/loss.hpp"
#include "nn/optim.hpp"

#include <xtensor/xsort.hpp>
#include <xtensor/xview.hpp>

#include <cmath>
#include <limits>

using attn::Index;
using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace models = attn::models;

namespace {

models::CopyNetConfig tiny(bool copy, bool selective_read) {
  models::CopyNetConfig c;
  c.src_vocab = 9, c.tgt_vocab = 8, c.embed_dim = 3, c.encoder_dim = 2, c.decoder_dim = 4, c.attention_dim = 3;
  c.copy = copy, c.selective_read = selective_read;
  return c;
}

std::vector<std::size_t> lengths_of(const xt::xarray<double>& a) {
  std::vector<std::size_t> out;
  for (double v : a) out.push_back(std::size_t(v));
  return out;
}

models::ExtendedSource extended(const Index& copy_ids, std::size_t vocab) {
  models::ExtendedSource e;
  e.copy_ids = copy_ids;
  e.extended_vocab = vocab;
  for (std::size_t k = 8; k < vocab; ++k) e.extra.push_back("w" + std::to_string(k));
  return e;
}

// The mean of -log p(y_t) over targets that are not <pad>.
Tensor nll(const Tensor& log_p, const Index& tgt_out) {
  const long E = long(log_p.size(2));
  return attn::nn::nll_loss(attn::reshape(log_p, {-1, E}), Index(xt::flatten(tgt_out)), 0);
}

void check_against_reference(const std::string& name, bool copy, bool selective_read) {
  test::Reference ref("copynet");
  models::CopyNetSeq2Seq model(tiny(copy, selective_read));
  for (auto& [param, p] : model.state()) *p = ref.tensor(name, param, /*requires_grad=*/true);
  const Index src = ref.index(name, "src"), tgt_in = ref.index(name, "tgt_in"), tgt_out = ref.index(name, "tgt_out");
  const std::vector<std::size_t> lengths = lengths_of(ref.array(name, "src_lengths"));
  Tensor log_p;
  if (copy) {
    const auto ext = extended(ref.index(name, "copy_ids"), std::size_t(ref.array(name, "extended_vocab")()));
    log_p = model.forward_extended(src, lengths, tgt_in, ext);
  } else {
    log_p = model.forward(src, lengths, tgt_in);
  }
  CHECK(test::allclose(log_p, ref.tensor(name, "log_prob"), 1e-12));
  const auto weights = model.last_attention();
  CHECK(test::allclose(weights.at("attention"), ref.tensor(name, "attention"), 1e-13));
  if (copy) CHECK(test::allclose(weights.at("copy"), ref.tensor(name, "copy"), 1e-13));
  if (copy && selective_read) CHECK(test::allclose(weights.at("selective_read"), ref.tensor(name, "selective_read"), 1e-13));
  CHECK(weights.count("selective_read") == std::size_t(copy && selective_read));
  Tensor loss = nll(log_p, tgt_out);
  CHECK(loss.item() == doctest::Approx(ref.array(name, "loss")()).epsilon(1e-13));
  loss.backward();
  for (const auto& [param, p] : model.named_parameters()) {
    INFO("grad of " << param);
    CHECK(test::allclose(p.grad(), ref.tensor(name, "grad_" + param), 1e-12));
  }
}

}  // namespace

TEST_CASE("CopyNetSeq2Seq equals the same model in PyTorch: log p, the attention, the copy weights, every gradient") {
  SUBCASE("copy and selective read, over an extended vocabulary") { check_against_reference("copynet", true, true); }
  SUBCASE("copy without the selective read") { check_against_reference("no_selective_read", true, false); }
  SUBCASE("copy over target ids only (source-only words as <unk>)") { check_against_reference("plain_ids", true, true); }
  SUBCASE("the generate mode alone") {
    models::CopyNetSeq2Seq model(tiny(false, true));
    CHECK(test::parameter_names(model).back() == "generate.bias");  // no copy_key
    check_against_reference("generate_only", false, true);
  }
}

TEST_CASE("CopyNetSeq2Seq: gradcheck of the loss through every parameter (float64)") {
  const Index src = {{4, 5, 4, 6}, {8, 5, 8, 0}};
  const std::vector<std::size_t> lengths = {4, 3};
  const Index copy_ids = {{4, 8, 4, 9}, {10, 8, 10, 0}};
  const Index tgt_in = {{1, 4, 8, 9}, {1, 10, 6, 10}}, tgt_out = {{4, 8, 9, 2}, {10, 6, 10, 2}};
  const Index plain_in = {{1, 4, 3, 3}, {1, 3, 6, 3}}, plain_out = {{4, 3, 3, 2}, {3, 6, 3, 2}};  // the same, in V
  for (bool copy : {true, false})
    for (bool selective : {true, false}) {
      if (!copy && !selective) continue;
      attn::manual_seed(5);
      models::CopyNetSeq2Seq model(tiny(copy, selective));
      INFO("copy " << copy << ", selective read " << selective);
      CHECK_GRADCHECK(
          [&](const Inputs&) {
            return copy ? nll(model.forward_extended(src, lengths, tgt_in, extended(copy_ids, 11)), tgt_out)
                        : nll(model.forward(src, lengths, plain_in), plain_out);
          },
          test::with_parameters(model, {}));
    }
}

TEST_CASE("CopyNetSeq2Seq: one distribution over the extended vocabulary; source-only ids come from copying alone") {
  attn::manual_seed(6);
  models::CopyNetSeq2Seq model(tiny(true, true));
  const Index src = {{4, 5, 4, 6, 7}, {8, 5, 8, 0, 0}};
  const Index copy_ids = {{4, 8, 4, 9, 5}, {10, 8, 10, 0, 0}};
  const Index tgt_in = {{1, 4, 8, 9}, {1, 10, 6, 0}};
  const Tensor log_p = model.forward_extended(src, {5, 3}, tgt_in, extended(copy_ids, 11));  // [2, 4, 11]
  const xt::xarray<double> p = xt::exp(log_p.to_array());
  const double floor = double(std::numeric_limits<float>::min());
  const auto copy = model.last_attention().at("copy").to_array();  // p(x_j, c): [2, 4, 5]
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t t = 0; t < 4; ++t) {
      INFO("row " << b << ", step " << t);
      CHECK(xt::sum(xt::view(p, b, t, xt::all()))() == doctest::Approx(1.0 + 11 * floor).epsilon(1e-13));
      // Row 0 holds 9 once and 8 once, not 10: 9's probability is its copy slot's, 10 has none.
      if (b == 0) {
        CHECK(p(b, t, 9) == doctest::Approx(copy(b, t, 3) + floor).epsilon(1e-13));
        CHECK(log_p.to_array()(b, t, 10) == doctest::Approx(std::log(floor)).epsilon(1e-13));
      }
      if (b == 1) CHECK(copy(b, t, 3) + copy(b, t, 4) == 0.0);  // padding is never copied
    }
}

TEST_CASE("CopyNetSeq2Seq: the selective read reads the positions that hold the word just written") {
  attn::manual_seed(7);
  models::CopyNetSeq2Seq model(tiny(true, true));
  const Index src = {{4, 5, 4, 6, 7}};
  const Index copy_ids = {{4, 8, 4, 9, 5}};
  const Index tgt_in = {{1, 4, 9, 6}};  // <bos>, a word at 0 and 2, a source-only word at 3, a word not in the source
  model.forward_extended(src, {5}, tgt_in, extended(copy_ids, 10));
  const auto rho = model.last_attention().at("selective_read").to_array();  // [1, 4, 5]
  const auto copy = model.last_attention().at("copy").to_array();           // [1, 4, 5]
  CHECK(xt::sum(xt::view(rho, 0, 0, xt::all()))() == 0.0);  // after <bos>: nothing to read
  // After 4: positions 0 and 2 only, in proportion to the copy weights of the step that wrote it.
  CHECK(rho(0, 1, 0) + rho(0, 1, 2) == doctest::Approx(1.0).epsilon(1e-14));
  CHECK(rho(0, 1, 0) / rho(0, 1, 2) == doctest::Approx(copy(0, 0, 0) / copy(0, 0, 2)).epsilon(1e-12));
  CHECK(rho(0, 1, 1) == 0.0);
  CHECK(rho(0, 2, 3) == doctest::Approx(1.0).epsilon(1e-14));  // after the source-only word 9: its one position
  CHECK(xt::sum(xt::view(rho, 0, 3, xt::all()))() == 0.0);    // after 6, which the source lacks
}

TEST_CASE("CopyNetSeq2Seq: step() after start_extended() equals forward_extended(), and forward() is the copy map's") {
  attn::manual_seed(8);
  models::CopyNetSeq2Seq model(tiny(true, true));
  const Index src = {{4, 5, 4, 6, 7}, {8, 5, 8, 0, 0}};
  const std::vector<std::size_t> lengths = {5, 3};
  const auto ext = extended(Index{{4, 8, 4, 9, 5}, {10, 8, 10, 0, 0}}, 11);
  const Index tgt_in = {{1, 4, 8, 9}, {1, 10, 6, 3}};
  attn::no_grad guard;
  const auto whole = model.forward_extended(src, lengths, tgt_in, ext).to_array();  // [2, 4, 11]
  const auto copy = model.last_attention().at("copy").to_array();
  models::DecoderState state = model.start_extended(src, lengths, ext);
  for (std::size_t t = 0; t < 4; ++t) {
    const Index prefix = xt::view(tgt_in, xt::all(), xt::range(0, t + 1));
    const auto step = model.step(state, prefix).to_array();  // [2, 11]
    CHECK(xt::allclose(step, xt::view(whole, xt::all(), t, xt::all()), 0.0, 1e-13));
    CHECK(xt::allclose(state.attention.at("copy").to_array(), xt::view(copy, xt::all(), t, xt::all()), 0.0, 1e-14));
  }
  // forward() copies through the map from source ids to target ids: the same as those ids given directly.
  const Index mapped = {{4, 5, 4, 6, 7}, {3, 5, 3, 0, 0}};  // the default map: the same ids, those >= 8 read as <unk>
  CHECK(xt::allclose(model.forward(src, lengths, Index{{1, 4, 3, 6}, {1, 3, 6, 3}}).to_array(),
                     model.forward_extended(src, lengths, Index{{1, 4, 3, 6}, {1, 3, 6, 3}}, extended(mapped, 8)).to_array(),
                     0.0, 1e-14));
}

TEST_CASE("CopyNetSeq2Seq: float32 equals float64") {
  attn::manual_seed(9);
  models::CopyNetSeq2Seq model(tiny(true, true));
  const Index src = {{4, 5, 4, 6, 7}, {8, 5, 8, 0, 0}};
  const auto ext = extended(Index{{4, 8, 4, 9, 5}, {10, 8, 10, 0, 0}}, 11);
  const Index tgt_in = {{1, 4, 8, 9}, {1, 10, 6, 0}};
  const auto f64 = model.forward_extended(src, {5, 3}, tgt_in, ext).to_array();
  model.to(attn::Dtype::Float32);
  const Tensor f32 = model.forward_extended(src, {5, 3}, tgt_in, ext);
  CHECK(f32.dtype() == attn::Dtype::Float32);
  CHECK(xt::allclose(f32.to(attn::Dtype::Float64).to_array(), f64, 1e-5, 1e-5));
}

TEST_CASE("CopyNetSeq2Seq learns to copy words it has never seen") {
  // Sources of 3 words from 40 names, the target the same words: the target vocabulary holds only
  // the specials and 2 of the names, so every other name must be copied. Held out: names never trained on.
  const std::size_t names = 40, V = 6;  // target: <pad> <bos> <eos> <unk>, names 0 and 1
  attn::Generator gen(11);
  auto sentences = [&](std::size_t first, std::size_t last, std::size_t n) {
    std::vector<std::vector<std::size_t>> out;
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<std::size_t> s;
      for (int k = 0; k < 3; ++k) s.push_back(first + std::size_t(attn::rand({1}, attn::Dtype::Float64, gen).item() * double(last - first)));
      out.push_back(s);
    }
    return out;
  };
  const auto train = sentences(0, 30, 64), held_out = sentences(30, 40, 32);
  // A batch: source ids (4 + name), extended ids (target id or V + k for the k-th new name of the batch).
  struct Batch { Index src, tgt_in, tgt_out, plain_out; models::ExtendedSource ext; };
  auto make = [&](const std::vector<std::vector<std::size_t>>& ss) {
    Batch b;
    const std::size_t B = ss.size();
    b.src = xt::zeros<std::int64_t>({B, std::size_t(3)});
    b.tgt_in = xt::zeros<std::int64_t>({B, std::size_t(4)});
    b.tgt_out = b.tgt_in, b.plain_out = b.tgt_in;
    b.ext.copy_ids = b.src;
    std::vector<std::size_t> extra;
    for (std::size_t i = 0; i < B; ++i) {
      b.tgt_in(i, 0) = 1;
      for (std::size_t j = 0; j < 3; ++j) {
        const std::size_t w = ss[i][j];
        b.src(i, j) = std::int64_t(4 + w);
        std::int64_t id = std::int64_t(4 + w);
        if (w >= 2) {
          auto it = std::find(extra.begin(), extra.end(), w);
          if (it == extra.end()) it = extra.insert(extra.end(), w);
          id = std::int64_t(V + std::size_t(it - extra.begin()));
        }
        b.ext.copy_ids(i, j) = id;
        b.tgt_out(i, j) = id;
        b.plain_out(i, j) = id >= std::int64_t(V) ? 3 : id;
        if (j < 2) b.tgt_in(i, j + 1) = id;
      }
      b.tgt_out(i, 3) = b.plain_out(i, 3) = 2;
    }
    b.ext.extended_vocab = V + extra.size();
    for (std::size_t w : extra) b.ext.extra.push_back(std::to_string(w));
    return b;
  };
  const Batch tr = make(train), ho = make(held_out);
  const std::vector<std::size_t> tr_len(train.size(), 3), ho_len(held_out.size(), 3);
  {
    const bool copy = true;
    attn::manual_seed(12);
    models::CopyNetConfig c;
    c.src_vocab = 4 + names, c.tgt_vocab = V, c.embed_dim = 16, c.encoder_dim = 16, c.decoder_dim = 32;
    c.attention_dim = 16, c.copy = copy;
    models::CopyNetSeq2Seq model(c);
    attn::nn::Adam adam(model.parameters(), 0.02);
    for (int step = 0; step < 150; ++step) {
      adam.zero_grad();
      Tensor loss = copy ? nll(model.forward_extended(tr.src, tr_len, tr.tgt_in, tr.ext), tr.tgt_out)
                         : nll(model.forward(tr.src, tr_len, tr.tgt_in), tr.plain_out);
      loss.backward();
      adam.step();
    }
    attn::no_grad guard;
    const auto log_p = (copy ? model.forward_extended(ho.src, ho_len, ho.tgt_in, ho.ext)
                             : model.forward(ho.src, ho_len, ho.tgt_in)).to_array();
    // The held-out names, teacher forced: how often the most probable id is the name itself.
    std::size_t right = 0, total = 0;
    for (std::size_t i = 0; i < held_out.size(); ++i)
      for (std::size_t j = 0; j < 3; ++j) {
        const auto row = xt::view(log_p, i, j, xt::all());
        right += std::size_t(std::int64_t(xt::argmax(row)()) == ho.tgt_out(i, j));
        ++total;
      }
    const double accuracy = double(right) / double(total);
    INFO("held-out names right " << accuracy);
    CHECK(accuracy > 0.95);  // the generate mode alone has no id for them: 0 by construction
  }
}

TEST_CASE("CopyNetSeq2Seq: the registry, and bad input names what is wrong") {
  using nlohmann::json;
  const json defaults = models::default_model_config("copynet");
  CHECK(defaults.at("copy") == true);
  CHECK(defaults.at("selective_read") == true);
  auto made = models::make_model({{"model", "copynet"}, {"embed_dim", 3}, {"encoder_dim", 2}, {"decoder_dim", 4},
                                  {"attention_dim", 3}, {"copy", false}}, 9, 8);
  auto& copynet = dynamic_cast<models::CopyNetSeq2Seq&>(*made);
  CHECK_FALSE(copynet.config.copy);
  CHECK(copynet.extra_repr().find("copy=false, selective_read=false") != std::string::npos);
  CHECK_THROWS_WITH_SUBSTR(models::make_model({{"model", "copynet"}, {"copy", false}, {"selective_read", true}}, 9, 8),
                           attn::ValueError, "'selective_read' needs copy = true");
  const Index src = {{4, 5, 4}};
  CHECK_THROWS_WITH_SUBSTR(copynet.start_extended(src, {3}, extended(Index{{4, 8, 4}}, 9)), attn::ValueError,
                           "needs the copy mode");
  models::CopyNetSeq2Seq model(tiny(true, true));
  CHECK_THROWS_WITH_SUBSTR(model.start_extended(src, {3}, extended(Index{{4, 8}}, 9)), attn::ShapeError,
                           "expected extended copy_ids of the source's shape [1, 3], got [1, 2]");
  CHECK_THROWS_WITH_SUBSTR(model.start_extended(src, {3}, extended(Index{{4, 9, 4}}, 9)), attn::ValueError,
                           "copy id 9 is outside the extended vocabulary 0..8");
  CHECK_THROWS_WITH_SUBSTR(model.forward_extended(src, {3}, Index{{1, 2}, {1, 2}}, extended(Index{{4, 8, 4}}, 9)),
                           attn::ShapeError, "expected tgt_in [1, T >= 1]");
  CHECK_THROWS_WITH_SUBSTR(model.forward_extended(src, {3}, Index{{1, 9}}, extended(Index{{4, 8, 4}}, 9)),
                           attn::ValueError, "tgt_in holds id 9, outside the extended vocabulary 0..8");
  CHECK_THROWS_WITH_SUBSTR(model.start(Index{{4, 12, 4}}, {3}), attn::ValueError, "source id 12 is outside the vocabulary of 9");
  attn::data::Vocab small({"a"});
  CHECK_THROWS_WITH_SUBSTR(model.set_copy_map(small, small), attn::ValueError, "expected vocabularies of 9 and 8 tokens");
}

TEST_CASE("extended_batch: each target in its own source's extended ids, <unk> for a word only another sentence holds") {
  attn::data::Vocab src_vocab({"open", "close"}), tgt_vocab({"ouvrir", "fermer"});
  const std::vector<attn::data::Example> examples = {{{"open", "gtk"}, {"ouvrir", "gtk"}, {}},
                                                     {{"close", "xkb", "gtk"}, {"fermer", "xkb", "qt"}, {}},
                                                     {{"close"}, {"fermer", "xkb"}, {}}};
  const attn::data::Batch batch = attn::data::make_batch(examples, {2, 0, 1}, src_vocab, tgt_vocab);
  const models::ExtendedBatch ext = models::extended_batch(batch, examples, tgt_vocab);
  const std::int64_t V = std::int64_t(tgt_vocab.size()), ouvrir = tgt_vocab.id("ouvrir"), fermer = tgt_vocab.id("fermer");
  // Rows in the batch's order: examples 2, 0, 1. Source words French lacks, by first appearance:
  // close = V, open = V + 1, gtk = V + 2, xkb = V + 3.
  CHECK(ext.source.extra == std::vector<std::string>{"close", "open", "gtk", "xkb"});
  CHECK(ext.source.copy_ids == Index{{V, 0, 0}, {V + 1, V + 2, 0}, {V, V + 3, V + 2}});
  // Example 2's target holds xkb, which only example 1's source holds: <unk> (3) for it, not V + 3.
  CHECK(ext.tgt_out == Index{{fermer, 3, 2, 0}, {ouvrir, V + 2, 2, 0}, {fermer, V + 3, 3, 2}});
  CHECK(ext.tgt_in == Index{{1, fermer, 3, 0}, {1, ouvrir, V + 2, 0}, {1, fermer, V + 3, 3}});
  // The batch-wide encode() would have given example 2's xkb the id V + 3.
  CHECK(ext.source.encode({"xkb"}, tgt_vocab) == std::vector<std::int64_t>{V + 3});
  CHECK(ext.source.encode({"xkb"}, tgt_vocab, 0) == std::vector<std::int64_t>{3});
  CHECK_THROWS_WITH_SUBSTR(ext.source.encode({"xkb"}, tgt_vocab, 3), attn::ValueError, "row 3 is outside the batch of 3");
  CHECK_THROWS_WITH_SUBSTR(models::extended_batch(batch, {examples[0]}, tgt_vocab), attn::ValueError,
                           "the batch holds example 2 of 1");
}

TEST_CASE("CopyNetSeq2Seq with copy = false is chapter 2's model: the same draws, the same distribution") {
  models::CopyNetConfig c = tiny(false, true);
  models::BahdanauConfig b;
  b.src_vocab = c.src_vocab, b.tgt_vocab = c.tgt_vocab, b.embed_dim = c.embed_dim, b.encoder_dim = c.encoder_dim;
  b.decoder_dim = c.decoder_dim, b.attention_dim = c.attention_dim;
  attn::manual_seed(21);
  models::CopyNetSeq2Seq generate_only(c);
  attn::manual_seed(21);
  models::BahdanauSeq2Seq bahdanau(b);
  const Index src = {{4, 5, 4, 6, 7}, {8, 5, 8, 0, 0}};
  const Index tgt_in = {{1, 4, 3, 5}, {1, 3, 6, 0}};
  const Tensor log_p = generate_only.forward(src, {5, 3}, tgt_in);
  CHECK(test::allclose(log_p, attn::log_softmax(bahdanau.forward(src, {5, 3}, tgt_in), -1), 1e-14));
  CHECK(test::allclose(generate_only.last_attention().at("attention"), bahdanau.last_attention().at("attention").detach(), 1e-15));
}
