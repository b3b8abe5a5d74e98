// The language models the command line trains (models/language_model.hpp): the Transformer's loss
// composed by hand, nll_sum against the loss, next_log_probs as distributions that agree with the
// scores, padding that changes nothing, gradcheck; the registry that builds them (models/registry.hpp);
// and their training (train/lm_training.hpp): the evaluation summed over batches, and keep_best with
// lower_is_better keeping the epoch of the lowest validation perplexity.
#include "../helpers.hpp"
#include "tiny_language_models.hpp"

#include "data/language_model.hpp"
#include "models/language_model.hpp"
#include "models/registry.hpp"
#include "train/lm_training.hpp"

#include <algorithm>
#include <cmath>

using attn::Index;
using attn::Tensor;
using Inputs = std::vector<Tensor>;
using attn::data::Tokens;
namespace models = attn::models;
namespace data = attn::data;

namespace {

constexpr std::size_t kVocab = test::kLmVocab;

models::TransformerConfig tiny_transformer() { return test::tiny_transformer_lm(16); }
models::PointerSentinelConfig tiny_pointer(bool pointer) { return test::tiny_pointer_lm(pointer, 2); }

// Two chunks, the second shorter (padded with <pad> = 0); targets are the inputs shifted by one.
const Index kInputs = {{2, 5, 4, 6, 5, 4}, {2, 7, 7, 8, 0, 0}};
const Index kTargets = {{5, 4, 6, 5, 4, 2}, {7, 7, 8, 2, 0, 0}};
constexpr std::size_t kCount = 10;  // targets that are not <pad>

// -log softmax(logits)[y] for every target that is not <pad>, computed here from the logits [B, T, V].
std::vector<double> hand_nll(const xt::xarray<double>& logits, const Index& targets) {
  std::vector<double> out;
  for (std::size_t b = 0; b < targets.shape(0); ++b)
    for (std::size_t t = 0; t < targets.shape(1); ++t) {
      if (targets(b, t) == 0) continue;
      double m = -INFINITY;
      for (std::size_t v = 0; v < logits.shape(2); ++v) m = std::max(m, logits(b, t, v));
      double s = 0.0;
      for (std::size_t v = 0; v < logits.shape(2); ++v) s += std::exp(logits(b, t, v) - m);
      out.push_back(m + std::log(s) - logits(b, t, std::size_t(targets(b, t))));
    }
  return out;
}

double sum(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x;
  return s;
}

// The Transformer's own logits for `inputs`, its source the one constant token.
xt::xarray<double> transformer_logits(models::TransformerLanguageModel& lm, const Index& inputs) {
  attn::no_grad guard;
  const std::size_t B = inputs.shape(0);
  Index src = Index::from_shape({B, std::size_t(1)});
  src.fill(4);
  return lm.transformer.forward(src, std::vector<std::size_t>(B, 1), inputs).to_array();
}

}  // namespace

TEST_CASE("TransformerLanguageModel: the loss is the cross-entropy of forward(source <4>, length 1, inputs), by hand") {
  attn::manual_seed(1);
  models::TransformerLanguageModel lm(tiny_transformer());
  CHECK(lm.transformer.config.src_vocab == 5);
  CHECK(lm.transformer.config.tgt_vocab == kVocab);
  CHECK(lm.max_length() == 16);
  const std::vector<double> nll = hand_nll(transformer_logits(lm, kInputs), kTargets);
  REQUIRE(nll.size() == kCount);
  CHECK(lm.loss(kInputs, kTargets).item() == doctest::Approx(sum(nll) / kCount).epsilon(1e-13));
  std::size_t count = 0;
  CHECK(lm.nll_sum(kInputs, kTargets, &count) == doctest::Approx(sum(nll)).epsilon(1e-13));
  CHECK(count == kCount);
  // Another source token gives other logits: the loss reads the source <4>, not any constant.
  Index other = Index::from_shape({std::size_t(2), std::size_t(1)});
  other.fill(3);
  const xt::xarray<double> with_3 = lm.transformer.forward(other, {1, 1}, kInputs).to_array();
  CHECK(std::abs(sum(hand_nll(with_3, kTargets)) - sum(nll)) > 1e-6);
}

TEST_CASE("nll_sum / count is the loss for the Transformer and the plain LSTM; the pointer adds its own term") {
  attn::manual_seed(2);
  models::TransformerLanguageModel transformer(tiny_transformer());
  models::PointerSentinelLanguageModel plain(tiny_pointer(false));
  for (models::LanguageModel* lm : std::vector<models::LanguageModel*>{&transformer, &plain}) {
    std::size_t count = 0;
    const double nll = lm->nll_sum(kInputs, kTargets, &count);
    CHECK(count == kCount);
    CHECK(nll / double(count) == doctest::Approx(lm->loss(kInputs, kTargets).item()).epsilon(1e-13));
  }
  models::PointerSentinelLanguageModel pointer(tiny_pointer(true));
  std::size_t count = 0;
  const double nll = pointer.nll_sum(kInputs, kTargets, &count);
  CHECK(count == kCount);
  // The loss is the mean -log p(y_t) plus the mean of -log(g_t + pointer mass on y_t).
  const models::LanguageModelOutput out = pointer.lm.forward(kInputs, kTargets);
  const auto term = out.log_gate_plus_mass.to_array();
  const auto log_prob = out.log_prob.to_array();
  double extra = 0.0, nll_here = 0.0;
  for (std::size_t i = 0; i < kTargets.size(); ++i)
    if (kTargets.flat(i) != 0) extra -= term.flat(i), nll_here -= log_prob.flat(i);
  CHECK(nll == doctest::Approx(nll_here).epsilon(1e-13));
  const double loss = pointer.loss(kInputs, kTargets).item();
  CHECK(extra / kCount > 1e-3);  // the term is there to be told apart
  CHECK(loss == doctest::Approx(nll / kCount + extra / kCount).epsilon(1e-13));
  CHECK(std::abs(loss - nll / kCount) > 1e-3);
  // Without pointer_loss the loss is nll / count again.
  models::PointerSentinelConfig c = tiny_pointer(true);
  c.pointer_loss = false;
  models::PointerSentinelLanguageModel no_term(c);
  CHECK(no_term.loss(kInputs, kTargets).item() ==
        doctest::Approx(no_term.nll_sum(kInputs, kTargets, nullptr) / kCount).epsilon(1e-13));
}

TEST_CASE("next_log_probs: every row a distribution, and at the targets the probabilities the scores give") {
  attn::manual_seed(3);
  models::TransformerLanguageModel transformer(tiny_transformer());
  models::PointerSentinelLanguageModel pointer(tiny_pointer(true)), plain(tiny_pointer(false));
  const std::vector<std::pair<std::string, models::LanguageModel*>> all = {
      {"transformer", &transformer}, {"pointer", &pointer}, {"plain", &plain}};
  for (const auto& [name, lm] : all) {
    CAPTURE(name);
    const xt::xarray<double> logp = lm->next_log_probs(kInputs);
    REQUIRE(logp.shape() == std::vector<std::size_t>{2, 6, kVocab});
    // logsumexp over the vocabulary is 0 at every step.
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t t = 0; t < 6; ++t) {
        double s = 0.0;
        for (std::size_t v = 0; v < kVocab; ++v) s += std::exp(logp(b, t, v));
        CHECK(std::abs(std::log(s)) < 1e-13);
      }
    // The per-token -log p at the targets.
    std::vector<double> nll;
    if (name == "transformer") {
      nll = hand_nll(transformer_logits(transformer, kInputs), kTargets);
    } else {
      auto& p = name == "pointer" ? pointer : plain;
      const auto lp = p.lm.forward(kInputs, kTargets).log_prob.to_array();
      for (std::size_t i = 0; i < kTargets.size(); ++i)
        if (kTargets.flat(i) != 0) nll.push_back(-lp.flat(i));
    }
    REQUIRE(nll.size() == kCount);
    std::size_t k = 0;
    double gathered = 0.0;
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t t = 0; t < 6; ++t) {
        if (kTargets(b, t) == 0) continue;
        const double p = std::exp(logp(b, t, std::size_t(kTargets(b, t))));
        CHECK(p == doctest::Approx(std::exp(-nll[k])).epsilon(1e-12));
        gathered -= logp(b, t, std::size_t(kTargets(b, t)));
        ++k;
      }
    CHECK(gathered == doctest::Approx(lm->nll_sum(kInputs, kTargets, nullptr)).epsilon(1e-12));
  }
}

TEST_CASE("a chunk scores the same alone, padded, and in a batch with a longer one") {
  attn::manual_seed(4);
  models::TransformerLanguageModel transformer(tiny_transformer());
  models::PointerSentinelLanguageModel pointer(tiny_pointer(true));
  for (models::LanguageModel* lm : std::vector<models::LanguageModel*>{&transformer, &pointer}) {
    const Index alone_in = {{2, 7, 7, 8}}, alone_tgt = {{7, 7, 8, 2}};
    const Index long_in = {{2, 5, 4, 6, 5, 4}}, long_tgt = {{5, 4, 6, 5, 4, 2}};
    const Index padded_in = {{2, 7, 7, 8, 0, 0}}, padded_tgt = {{7, 7, 8, 2, 0, 0}};
    std::size_t n_alone = 0, n_padded = 0, n_batch = 0;
    const double alone = lm->nll_sum(alone_in, alone_tgt, &n_alone);
    CHECK(n_alone == 4);
    CHECK(lm->nll_sum(padded_in, padded_tgt, &n_padded) == doctest::Approx(alone).epsilon(1e-13));
    CHECK(n_padded == 4);
    const double batch = lm->nll_sum(kInputs, kTargets, &n_batch);
    CHECK(n_batch == 10);
    CHECK(batch == doctest::Approx(alone + lm->nll_sum(long_in, long_tgt, nullptr)).epsilon(1e-13));
    // The loss too: the mean over the chunk's 4 targets.
    CHECK(lm->loss(padded_in, padded_tgt).item() == doctest::Approx(lm->loss(alone_in, alone_tgt).item()).epsilon(1e-13));
    // And the distributions of its steps.
    const auto a = lm->next_log_probs(alone_in), p = lm->next_log_probs(padded_in), b = lm->next_log_probs(kInputs);
    for (std::size_t t = 0; t < 4; ++t)
      for (std::size_t v = 0; v < kVocab; ++v) {
        CHECK(p(0, t, v) == doctest::Approx(a(0, t, v)).epsilon(1e-13));
        CHECK(b(1, t, v) == doctest::Approx(a(0, t, v)).epsilon(1e-13));
      }
  }
}

TEST_CASE("gradcheck of TransformerLanguageModel::loss and PointerSentinelLanguageModel::loss (float64)") {
  attn::manual_seed(5);
  models::TransformerLanguageModel transformer(tiny_transformer());
  CHECK_GRADCHECK([&](const Inputs&) { return transformer.loss(kInputs, kTargets); },
                  transformer.module().parameters());
  for (bool with_pointer : {true, false}) {
    CAPTURE(with_pointer);
    models::PointerSentinelLanguageModel lm(tiny_pointer(with_pointer));
    CHECK_GRADCHECK([&](const Inputs&) { return lm.loss(kInputs, kTargets); }, lm.module().parameters());
  }
}

// ---- the registry ----

TEST_CASE("registry: the language models, their units, tasks and default configs with every field") {
  CHECK(models::language_model_names() == std::vector<std::string>{"pointer-sentinel", "transformer-lm"});
  CHECK(models::is_language_model("pointer-sentinel"));
  CHECK_FALSE(models::is_language_model("transformer"));
  CHECK(models::language_model_unit("pointer-sentinel") == "words");
  CHECK(models::language_model_unit("transformer-lm") == "characters");
  CHECK_THROWS_WITH_SUBSTR(models::language_model_unit("gpt"), attn::ValueError, "unknown language model 'gpt'");
  for (const std::string& name : models::language_model_names()) {
    const models::TrainableModel* m = models::find_trainable_model(name);
    REQUIRE(m != nullptr);
    CHECK(m->family == models::ModelFamily::LanguageModel);
    CHECK(m->tasks == std::vector<std::string>{"FILE.txt"});
  }
  CHECK(models::task_kind("corpora/ptb.train.txt") == "FILE.txt");
  CHECK(models::task_kind(".txt") == ".txt");
  CHECK(models::task_kind("notes.txt.gz") == "notes.txt.gz");
  CHECK(std::find(models::task_names().begin(), models::task_names().end(), "FILE.txt") != models::task_names().end());
  CHECK(models::models_for_task("book.txt") == "pointer-sentinel or transformer-lm");

  const nlohmann::json pointer = models::default_language_model_config("pointer-sentinel");
  CHECK(pointer == nlohmann::json{{"model", "pointer-sentinel"}, {"embed_dim", 64}, {"hidden_dim", 128}, {"window", 64},
                                  {"pointer", true}, {"pointer_loss", true}});
  const nlohmann::json transformer = models::default_language_model_config("transformer-lm");
  CHECK(transformer == nlohmann::json{{"model", "transformer-lm"},
                                      {"d_model", 64},
                                      {"nhead", 4},
                                      {"num_encoder_layers", 1},
                                      {"num_decoder_layers", 2},
                                      {"dim_feedforward", 256},
                                      {"dropout", 0.0},
                                      {"activation", "relu"},
                                      {"norm_first", false},
                                      {"learned_positions", false},
                                      {"max_len", 1024},
                                      {"tie_weights", false}});
  // Every field of a default config is read back as it is.
  for (const std::string& name : models::language_model_names()) {
    const nlohmann::json d = models::default_language_model_config(name);
    CHECK_NOTHROW(models::make_language_model(d, 7));
  }
  CHECK_THROWS_WITH_SUBSTR(models::default_language_model_config("transformer"), attn::ValueError,
                           "unknown language model 'transformer'");
}

TEST_CASE("registry: make_language_model builds the named class over the vocabulary; bad configs are named") {
  attn::manual_seed(6);
  auto p = models::make_language_model({{"model", "pointer-sentinel"}, {"embed_dim", 3}, {"hidden_dim", 5}}, 11);
  auto* ps = dynamic_cast<models::PointerSentinelLanguageModel*>(p.get());
  REQUIRE(ps != nullptr);
  CHECK(ps->lm.config.vocab == 11);
  CHECK(ps->lm.config.embed_dim == 3);
  CHECK(ps->lm.config.hidden_dim == 5);
  CHECK(ps->lm.config.window == 64);  // the registry's default, not PointerSentinelConfig's 100
  CHECK(ps->lm.out.weight.shape() == attn::Shape{11, 5});
  CHECK(p->max_length() == 0);
  CHECK(&p->module() == static_cast<attn::nn::Module*>(&ps->lm));
  // The checkpoint names are those of a bare PointerSentinelLM (a notebook's).
  models::PointerSentinelConfig bare_config;
  bare_config.vocab = 11, bare_config.embed_dim = 3, bare_config.hidden_dim = 5, bare_config.window = 64;
  models::PointerSentinelLM bare(bare_config);
  std::vector<std::string> keys, bare_keys;
  for (const auto& [name, t] : p->module().state()) keys.push_back(name);
  for (const auto& [name, t] : bare.state()) bare_keys.push_back(name);
  CHECK(keys == bare_keys);
  CHECK(std::find(keys.begin(), keys.end(), "sentinel") != keys.end());

  auto t = models::make_language_model({{"model", "transformer-lm"}, {"d_model", 8}, {"nhead", 2},
                                        {"dim_feedforward", 16}, {"max_len", 32}}, 13);
  auto* tl = dynamic_cast<models::TransformerLanguageModel*>(t.get());
  REQUIRE(tl != nullptr);
  CHECK(tl->transformer.config.tgt_vocab == 13);
  CHECK(tl->transformer.config.src_vocab == 5);
  CHECK(tl->transformer.config.d_model == 8);
  CHECK(tl->transformer.config.num_decoder_layers == 2);  // chapter 15's, not TransformerConfig's default
  CHECK(tl->transformer.config.dropout == 0.0);
  CHECK(t->max_length() == 32);
  CHECK(t->next_log_probs(Index{{2, 5, 12}}).shape() == std::vector<std::size_t>{1, 3, 13});
  CHECK(&t->module() == static_cast<attn::nn::Module*>(&tl->transformer));
  CHECK(dynamic_cast<models::PointerSentinelLanguageModel*>(t.get()) == nullptr);

  CHECK_THROWS_WITH_SUBSTR(models::make_language_model({{"model", "pointer-sentinel"}, {"hiden_dim", 8}}, 9),
                           attn::ValueError, "unknown field 'hiden_dim'");
  CHECK_THROWS_WITH_SUBSTR(models::make_language_model({{"model", "transformer-lm"}, {"embed_dim", 8}}, 9),
                           attn::ValueError, "unknown field 'embed_dim'");
  CHECK_THROWS_WITH_SUBSTR(models::make_language_model({{"model", "pointer-sentinel"}, {"window", -3}}, 9),
                           attn::ValueError, "field 'window' must be a whole number >= 0");
  CHECK_THROWS_WITH_SUBSTR(models::make_language_model({{"model", "pointer-sentinel"}, {"pointer", "yes"}}, 9),
                           attn::ValueError, "field 'pointer' has the wrong type");
  CHECK_THROWS_WITH_SUBSTR(models::make_language_model({{"model", "gpt"}}, 9), attn::ValueError,
                           "unknown language model 'gpt'");
  CHECK_THROWS_WITH_SUBSTR(models::make_language_model({{"model", "bahdanau"}}, 9), attn::ValueError,
                           "unknown language model 'bahdanau'");
  CHECK_THROWS_WITH_SUBSTR(models::make_language_model({{"embed_dim", 3}}, 9), attn::ValueError,
                           "expected {\"model\": NAME");
}

// ---- training ----

namespace {

// A text of the 5 words a..e, each line a few of them; the vocabulary is the 4 specials and a..e.
Tokens text(std::uint64_t seed, std::size_t lines) {
  attn::Generator gen(seed);
  Tokens out;
  const std::vector<std::string> words = {"a", "b", "c", "d", "e"};
  for (std::size_t l = 0; l < lines; ++l) {
    const auto n = gen.randint(1, 6);
    for (std::int64_t i = 0; i < n; ++i) out.push_back(words[std::size_t(gen.randint(0, 5))]);
    out.push_back("<eos>");
  }
  return out;
}

data::Vocab vocab() { return data::Vocab::build({{"a", "b", "c", "d", "e"}}); }

}  // namespace

TEST_CASE("evaluate_language_model: nll_sum over every chunk, the same in batches of 1 and 32; the mode restored") {
  attn::manual_seed(7);
  const data::Vocab v = vocab();
  REQUIRE(v.size() == kVocab);
  const std::vector<Tokens> chunks = data::lm_chunks({text(1, 20), text(2, 7)}, 5);
  REQUIRE(chunks.size() > 10);
  REQUIRE(chunks.size() % 4 != 0);
  models::TransformerLanguageModel transformer(tiny_transformer());
  models::PointerSentinelLanguageModel pointer(tiny_pointer(true));
  for (models::LanguageModel* lm : std::vector<models::LanguageModel*>{&transformer, &pointer}) {
    // By hand: each chunk alone.
    double nll = 0.0;
    std::size_t tokens = 0;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      const data::LMBatch b = data::make_lm_batch(chunks, {i}, v);
      nll += lm->nll_sum(b.inputs, b.targets, nullptr);
      tokens += chunks[i].size() - 1;
    }
    const models::LanguageModelScore one = models::evaluate_language_model(*lm, chunks, v, 1);
    const models::LanguageModelScore all = models::evaluate_language_model(*lm, chunks, v, 32);
    CHECK(one.tokens == tokens);
    CHECK(all.tokens == tokens);
    CHECK(std::abs(one.nll - nll) <= 1e-12 * nll);
    CHECK(std::abs(all.nll - one.nll) <= 1e-12 * nll);
    // Batch sizes that leave a shorter last batch.
    for (std::size_t batch_size : {3, 4, 5, 7}) {
      CAPTURE(batch_size);
      const models::LanguageModelScore some = models::evaluate_language_model(*lm, chunks, v, batch_size);
      CHECK(some.tokens == tokens);
      CHECK(std::abs(some.nll - one.nll) <= 1e-12 * nll);
    }
    CHECK(all.cross_entropy() == doctest::Approx(nll / double(tokens)).epsilon(1e-12));
    CHECK(all.perplexity() == doctest::Approx(std::exp(nll / double(tokens))).epsilon(1e-12));
    CHECK(all.bits_per_token() == doctest::Approx(nll / double(tokens) / std::log(2.0)).epsilon(1e-12));
    // The mode it found, either one.
    lm->module().train();
    models::evaluate_language_model(*lm, chunks, v, 4);
    CHECK(lm->module().is_training());
    lm->module().eval();
    models::evaluate_language_model(*lm, chunks, v, 4);
    CHECK_FALSE(lm->module().is_training());
  }
  CHECK(std::isnan(models::LanguageModelScore{}.cross_entropy()));
  CHECK_THROWS_WITH_SUBSTR(models::evaluate_language_model(pointer, {}, v), attn::ValueError,
                           "evaluate_language_model: expected chunks to score, got none");
  CHECK_THROWS_WITH_SUBSTR(models::evaluate_language_model(pointer, chunks, v, 0), attn::ValueError,
                           "batch_size must be at least 1");
}

TEST_CASE("evaluate_language_model scores in eval mode: the Transformer's dropout is off") {
  attn::manual_seed(8);
  models::TransformerConfig c = tiny_transformer();
  c.dropout = 0.5;
  models::TransformerLanguageModel lm(c);
  const data::Vocab v = vocab();
  const std::vector<Tokens> chunks = data::lm_chunks({text(3, 12)}, 6);
  lm.module().eval();
  const double expected = models::evaluate_language_model(lm, chunks, v, 4).nll;
  lm.module().train();
  CHECK(models::evaluate_language_model(lm, chunks, v, 4).nll == doctest::Approx(expected).epsilon(1e-12));
  CHECK(models::evaluate_language_model(lm, chunks, v, 2).nll == doctest::Approx(expected).epsilon(1e-12));
}

namespace {

struct Run {
  std::vector<double> validation;
  std::size_t best_epoch = 0;
  double best_score = 0.0, restored = 0.0;
};

// Trains a small plain LSTM on one text for `epochs` epochs at a high learning rate, validated on another,
// keeping its best epoch (lowest perplexity first when lower_is_better); then restores it.
Run train_lm(bool lower_is_better, std::size_t epochs) {
  attn::manual_seed(9);
  const data::Vocab v = vocab();
  const std::vector<Tokens> train = data::lm_chunks({text(10, 30)}, 8), valid = data::lm_chunks({text(11, 12)}, 8);
  models::PointerSentinelConfig c = tiny_pointer(false);
  c.embed_dim = 6, c.hidden_dim = 12;
  models::PointerSentinelLanguageModel lm(c);
  models::EpochTrainerOptions o;
  o.epochs = epochs;
  o.lr = 0.1;
  o.seed = 3;
  o.keep_best = true;
  o.lower_is_better = lower_is_better;
  models::EpochTrainer trainer(lm.module(), models::language_model_family(lm, train, valid, v, 4), o);
  CHECK(trainer.train());
  Run r;
  r.validation = trainer.epoch_validation();
  r.best_epoch = trainer.best_epoch();
  r.best_score = trainer.best_score();
  trainer.restore_best();
  r.restored = models::evaluate_language_model(lm, valid, v, 4).perplexity();
  return r;
}

}  // namespace

TEST_CASE("language_model_family + EpochTrainer: lower_is_better keeps the epoch of the lowest validation perplexity") {
  const Run low = train_lm(true, 8);
  REQUIRE(low.validation.size() == 8);
  const auto lowest = std::min_element(low.validation.begin(), low.validation.end());
  const std::size_t argmin = std::size_t(lowest - low.validation.begin()) + 1;
  std::string shown;
  for (double p : low.validation) shown += std::to_string(p) + " ";
  INFO("validation perplexities: " << shown);
  // The lr overshoots: perplexity falls, then rises again, so the best epoch is neither the first nor the last.
  CHECK(argmin == 4);
  CHECK(low.best_epoch == argmin);
  CHECK(low.best_score == *lowest);
  CHECK(low.validation.back() > *lowest * 1.05);
  // The weights restored are that epoch's: they score its perplexity again.
  CHECK(low.restored == doctest::Approx(*lowest).epsilon(1e-12));
  // Each validation is the model's perplexity on the validation chunks (above 1, below the vocabulary's 9 at worst).
  for (double p : low.validation) {
    CHECK(p > 1.0);
    CHECK(p < 9.0);
  }

  // Without lower_is_better: the same run keeps the highest (an accuracy's rule), here the first epoch.
  const Run high = train_lm(false, 8);
  CHECK(high.validation == low.validation);
  const auto highest = std::max_element(high.validation.begin(), high.validation.end());
  CHECK(high.best_epoch == std::size_t(highest - high.validation.begin()) + 1);
  CHECK(high.best_epoch == 1);
  CHECK(high.best_score == *highest);
  CHECK(high.restored == doctest::Approx(*highest).epsilon(1e-12));
}

TEST_CASE("language_model_family: bad arguments, and no validation without validation chunks") {
  attn::manual_seed(10);
  const data::Vocab v = vocab();
  models::PointerSentinelLanguageModel lm(tiny_pointer(false));
  const std::vector<Tokens> train = data::lm_chunks({text(12, 6)}, 4);
  CHECK_THROWS_WITH_SUBSTR(models::language_model_family(lm, {}, train, v, 2), attn::ValueError,
                           "language_model_family: expected training chunks, got none");
  CHECK_THROWS_WITH_SUBSTR(models::language_model_family(lm, train, train, v, 0), attn::ValueError,
                           "batch_size must be at least 1");
  const std::vector<Tokens> none;
  const models::EpochFamily f = models::language_model_family(lm, train, none, v, 2);
  CHECK_FALSE(static_cast<bool>(f.validate));
  // A step's loss is the model's loss on that batch of the epoch drawn.
  attn::Generator order(5);
  const std::size_t batches = f.draw_epoch(order);
  CHECK(batches == (train.size() + 1) / 2);
  attn::Generator again(5);
  data::BatchOptions b;
  b.batch_size = 2;
  const std::vector<data::LMBatch> expected = data::make_lm_batches(train, v, b, again);
  REQUIRE(expected.size() == batches);
  for (std::size_t i = 0; i < batches; ++i)
    CHECK(f.step(i).loss.item() ==
          doctest::Approx(lm.loss(expected[i].inputs, expected[i].targets).item()).epsilon(1e-13));
}
