// Text from a language model (decode/generate.hpp): greedy steps recomputed by hand, <pad> and <bos>
// never written, seeded draws, top_k = 1 as greedy, the draws' frequencies against p^(1/temperature),
// the log p reported, the context read, bad input.
#include "../helpers.hpp"
#include "../models/tiny_language_models.hpp"

#include "decode/generate.hpp"
#include "models/language_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>

using attn::Index;
using attn::Tensor;
namespace models = attn::models;

namespace {

constexpr std::size_t kVocab = test::kLmVocab;

models::TransformerConfig tiny(std::size_t max_len = 32) { return test::tiny_transformer_lm(max_len); }
models::PointerSentinelConfig tiny_pointer() { return test::tiny_pointer_lm(true, 3); }

// Makes <bos> (then <pad>) the model's most likely next token at every step, by its output bias.
void prefer_specials(models::TransformerLanguageModel& lm) {
  for (auto& [name, p] : lm.transformer.state())
    if (name == "out.bias") {
      xt::xarray<double> b = p->to_array();
      b(1) = 30.0;
      b(0) = 20.0;
      *p = attn::tensor(b, true);
      return;
    }
  FAIL("no out.bias");
}

// log p(. | tokens) at the last step, the model reading exactly `tokens`.
std::vector<double> last_log_probs(models::LanguageModel& lm, const std::vector<std::int64_t>& tokens) {
  Index in = Index::from_shape({std::size_t(1), tokens.size()});
  for (std::size_t t = 0; t < tokens.size(); ++t) in(0, t) = tokens[t];
  const xt::xarray<double> logp = lm.next_log_probs(in);
  std::vector<double> out(logp.shape(2));
  for (std::size_t v = 0; v < out.size(); ++v) out[v] = logp(0, tokens.size() - 1, v);
  return out;
}

// The most likely token that is not <pad> or <bos> (the lowest id of a tie).
std::int64_t best_text_token(const std::vector<double>& logp) {
  std::size_t best = 2;
  for (std::size_t v = 3; v < logp.size(); ++v)
    if (logp[v] > logp[best]) best = v;
  return std::int64_t(best);
}

// Greedy by hand: each step reads the last `context` tokens (0: all) of <eos> + prompt + what was written.
models::Generated greedy_by_hand(models::LanguageModel& lm, std::vector<std::int64_t> prompt, std::size_t steps,
                                 std::size_t context) {
  std::vector<std::int64_t> text{2};
  text.insert(text.end(), prompt.begin(), prompt.end());
  models::Generated g;
  for (std::size_t s = 0; s < steps; ++s) {
    const std::size_t from = context && text.size() > context ? text.size() - context : 0;
    const std::vector<double> logp = last_log_probs(lm, std::vector<std::int64_t>(text.begin() + long(from), text.end()));
    const std::int64_t id = best_text_token(logp);
    g.ids.push_back(id);
    g.log_probs.push_back(logp[std::size_t(id)]);
    text.push_back(id);
  }
  return g;
}

void check_same(const models::Generated& a, const models::Generated& b) {
  CHECK(a.ids == b.ids);
  REQUIRE(a.log_probs.size() == b.log_probs.size());
  for (std::size_t i = 0; i < a.log_probs.size(); ++i) CHECK(a.log_probs[i] == doctest::Approx(b.log_probs[i]).epsilon(1e-12));
}

models::GenerateOptions options(std::size_t max_tokens, double temperature, std::size_t top_k = 0, std::size_t context = 0) {
  models::GenerateOptions o;
  o.max_tokens = max_tokens;
  o.temperature = temperature;
  o.top_k = top_k;
  o.context = context;
  return o;
}

}  // namespace

TEST_CASE("generate, temperature 0: the argmax of next_log_probs at each step, never <pad> or <bos>") {
  attn::manual_seed(1);
  models::TransformerLanguageModel lm(tiny());
  prefer_specials(lm);
  const std::vector<std::int64_t> prompt = {5, 6, 4};
  attn::Generator gen(0);
  const models::Generated g = models::generate(lm, prompt, options(12, 0.0), gen);
  REQUIRE(g.ids.size() == 12);
  REQUIRE(g.log_probs.size() == 12);
  check_same(g, greedy_by_hand(lm, prompt, 12, 0));
  // <bos> is what the model likes best at every step, and is never written; neither is <pad>.
  std::vector<std::int64_t> text{2, 5, 6, 4};
  for (std::size_t s = 0; s < g.ids.size(); ++s) {
    const std::vector<double> logp = last_log_probs(lm, text);
    CHECK(std::max_element(logp.begin(), logp.end()) - logp.begin() == 1);
    CHECK(g.ids[s] >= 2);
    text.push_back(g.ids[s]);
  }
  // The pointer sentinel model too (its log p is the log of its mixture).
  attn::manual_seed(2);
  models::PointerSentinelLanguageModel pointer(tiny_pointer());
  check_same(models::generate(pointer, {5, 5, 7}, options(10, 0.0), gen), greedy_by_hand(pointer, {5, 5, 7}, 10, 0));
  // An empty prompt reads <eos> alone; max_tokens 0 writes nothing.
  check_same(models::generate(lm, {}, options(5, 0.0), gen), greedy_by_hand(lm, {}, 5, 0));
  CHECK(models::generate(lm, prompt, options(0, 1.0), gen).ids.empty());
}

TEST_CASE("generate: the same seed draws the same tokens, another seed others; top_k = 1 is greedy") {
  attn::manual_seed(3);
  models::TransformerLanguageModel lm(tiny());
  const std::vector<std::int64_t> prompt = {5, 6};
  attn::Generator a(7), b(7), c(8);
  const models::Generated ga = models::generate(lm, prompt, options(30, 1.0), a);
  const models::Generated gb = models::generate(lm, prompt, options(30, 1.0), b);
  const models::Generated gc = models::generate(lm, prompt, options(30, 1.0), c);
  CHECK(ga.ids == gb.ids);
  CHECK(ga.log_probs == gb.log_probs);
  CHECK(ga.ids != gc.ids);
  for (std::int64_t id : ga.ids) CHECK(id >= 2);
  // Drawn, not greedy: the draws differ from the argmax somewhere.
  const models::Generated greedy = greedy_by_hand(lm, prompt, 30, 0);
  CHECK(ga.ids != greedy.ids);
  for (std::uint64_t seed : {1, 2, 3})
    for (double temperature : {0.5, 1.0, 4.0}) {
      CAPTURE(seed);
      CAPTURE(temperature);
      attn::Generator gen(seed);
      check_same(models::generate(lm, prompt, options(30, temperature, 1), gen), greedy);
    }
}

TEST_CASE("generate: log_probs are the model's log p of each token written, before temperature and top_k") {
  attn::manual_seed(4);
  models::TransformerLanguageModel lm(tiny());
  const std::vector<std::int64_t> prompt = {7};
  attn::Generator gen(11);
  const models::Generated g = models::generate(lm, prompt, options(25, 0.6, 3), gen);
  std::vector<std::int64_t> text{2, 7};
  for (std::size_t s = 0; s < g.ids.size(); ++s) {
    CAPTURE(s);
    const std::vector<double> logp = last_log_probs(lm, text);
    const std::size_t id = std::size_t(g.ids[s]);
    CHECK(g.log_probs[s] == doctest::Approx(logp[id]).epsilon(1e-12));
    // With top_k 3, the token is one of the 3 most likely text tokens: fewer than 3 others beat it.
    std::size_t above = 0;
    for (std::size_t v = 2; v < kVocab; ++v) above += logp[v] > logp[id];
    CHECK(above < 3);
    text.push_back(g.ids[s]);
  }
}

TEST_CASE("generate draws token i with probability p_i^(1/temperature) / sum over the top_k, <pad> and <bos> aside") {
  attn::manual_seed(5);
  models::TransformerLanguageModel lm(tiny());
  const std::vector<std::int64_t> prompt = {4, 8};
  const std::vector<double> logp = last_log_probs(lm, {2, 4, 8});
  for (auto [temperature, top_k] : std::vector<std::pair<double, std::size_t>>{{1.0, 0}, {0.5, 0}, {2.0, 4}}) {
    CAPTURE(temperature);
    CAPTURE(top_k);
    // The expected distribution, by hand.
    std::vector<std::size_t> order = {2, 3, 4, 5, 6, 7, 8};
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return logp[a] > logp[b]; });
    if (top_k) order.resize(top_k);
    std::map<std::int64_t, double> expected;
    double total = 0.0;
    for (std::size_t v : order) total += expected[std::int64_t(v)] = std::exp(logp[v] / temperature);
    for (auto& [v, p] : expected) p /= total;
    // 4000 draws of one token, each from its own generator.
    const int n = 4000;
    std::map<std::int64_t, int> seen;
    for (int i = 0; i < n; ++i) {
      attn::Generator gen(std::uint64_t(1000 + i));
      ++seen[models::generate(lm, prompt, options(1, temperature, top_k), gen).ids.at(0)];
    }
    for (const auto& [v, count] : seen) {
      CAPTURE(v);
      CHECK(expected.count(v) == 1);  // nothing outside the top_k, no <pad>, no <bos>
    }
    for (const auto& [v, p] : expected) {
      CAPTURE(v);
      const double freq = double(seen[v]) / n, sd = std::sqrt(p * (1 - p) / n);
      CHECK(std::abs(freq - p) <= 4 * sd + 1e-3);
    }
  }
}

TEST_CASE("generate: context caps what each step reads; the model's max_length caps it too") {
  attn::manual_seed(6);
  models::TransformerLanguageModel lm(tiny());
  const std::vector<std::int64_t> prompt = {5, 6, 7, 8, 4, 5};
  attn::Generator gen(0);
  // context 1: each step reads only the last token.
  const models::Generated one = models::generate(lm, prompt, options(10, 0.0, 0, 1), gen);
  check_same(one, greedy_by_hand(lm, prompt, 10, 1));
  CHECK(one.ids != models::generate(lm, prompt, options(10, 0.0), gen).ids);  // reading everything differs
  check_same(models::generate(lm, prompt, options(10, 0.0, 0, 3), gen), greedy_by_hand(lm, prompt, 10, 3));
  // A context longer than the text reads it all.
  check_same(models::generate(lm, prompt, options(6, 0.0, 0, 100), gen), greedy_by_hand(lm, prompt, 6, 0));
  // A Transformer of 4 positions reads the last 4 tokens, whatever the context asked.
  attn::manual_seed(6);
  models::TransformerLanguageModel short_lm(tiny(4));
  CHECK(short_lm.max_length() == 4);
  check_same(models::generate(short_lm, prompt, options(8, 0.0), gen), greedy_by_hand(short_lm, prompt, 8, 4));
  check_same(models::generate(short_lm, prompt, options(8, 0.0, 0, 50), gen), greedy_by_hand(short_lm, prompt, 8, 4));
  check_same(models::generate(short_lm, prompt, options(8, 0.0, 0, 2), gen), greedy_by_hand(short_lm, prompt, 8, 2));
  // The pointer model has no limit: context 2 reads the last 2.
  models::PointerSentinelLanguageModel pointer(tiny_pointer());
  CHECK(pointer.max_length() == 0);
  check_same(models::generate(pointer, prompt, options(8, 0.0, 0, 2), gen), greedy_by_hand(pointer, prompt, 8, 2));
}

TEST_CASE("generate restores the model's mode and runs it in eval mode") {
  attn::manual_seed(7);
  models::TransformerConfig c = tiny();
  c.dropout = 0.5;
  models::TransformerLanguageModel lm(c);
  attn::Generator gen(0);
  lm.module().eval();
  const models::Generated expected = greedy_by_hand(lm, {5, 6}, 8, 0);
  lm.module().train();
  check_same(models::generate(lm, {5, 6}, options(8, 0.0), gen), expected);  // no dropout in the steps
  CHECK(lm.module().is_training());
  lm.module().eval();
  models::generate(lm, {5, 6}, options(2, 1.0), gen);
  CHECK_FALSE(lm.module().is_training());
}

TEST_CASE("generate: a negative or non-finite temperature and prompt ids outside the vocabulary are ValueErrors") {
  attn::manual_seed(8);
  models::TransformerLanguageModel lm(tiny());
  models::PointerSentinelLanguageModel pointer(tiny_pointer());
  attn::Generator gen(0);
  for (double t : {-0.5, -1e-300, std::nan(""), double(INFINITY)}) {
    CAPTURE(t);
    CHECK_THROWS_WITH_SUBSTR(models::generate(lm, {5}, options(3, t), gen), attn::ValueError,
                             "generate: temperature must be finite and >= 0");
  }
  // The model refuses them as it reads them (its embedding names the id); generate refuses an id the
  // context hides from the model itself.
  for (models::LanguageModel* m : std::vector<models::LanguageModel*>{&lm, &pointer}) {
    CHECK_THROWS_WITH_SUBSTR(models::generate(*m, {5, 9}, options(3, 0.0), gen), attn::ValueError, "id 9");
    CHECK_THROWS_WITH_SUBSTR(models::generate(*m, {-1, 5}, options(3, 0.0), gen), attn::ValueError, "id -1");
    CHECK_THROWS_WITH_SUBSTR(models::generate(*m, {9, 5}, options(3, 0.0, 0, 1), gen), attn::ValueError,
                             "generate: the prompt holds the id 9, outside the model's 9 tokens");
  }
}

// generate() checks the prompt's ids before the model reads them: its own message, not the model's
// ("embedding: id 9 is out of range ..."), and with max_tokens 0 too.
TEST_CASE("generate: a prompt id outside the vocabulary is refused by generate itself, before the model reads it") {
  attn::manual_seed(8);
  models::TransformerLanguageModel lm(tiny());
  attn::Generator gen(0);
  CHECK_THROWS_WITH_SUBSTR(models::generate(lm, {5, 9}, options(3, 0.0), gen), attn::ValueError,
                           "generate: the prompt holds the id 9, outside the model's 9 tokens");
  CHECK_THROWS_AS(models::generate(lm, {5, 9}, options(0, 0.0), gen), attn::ValueError);
}

TEST_CASE("generate through the Transformer's key/value cache writes what reading the whole text again writes") {
  // Every kind of position the chapter teaches, greedy and drawn, with a context shorter than the text
  // (the window slides: the cache starts over) and without.
  struct Positions {
    const char* name;
    bool learned, add;
    attn::nn::AttentionPosition attention;
  };
  for (const Positions& p : {Positions{"sinusoidal", false, true, attn::nn::AttentionPosition::None},
                             Positions{"learned", true, true, attn::nn::AttentionPosition::None},
                             Positions{"rotary", false, false, attn::nn::AttentionPosition::Rotary},
                             Positions{"alibi", false, false, attn::nn::AttentionPosition::ALiBi}}) {
    models::TransformerConfig c = tiny(12);
    c.learned_positions = p.learned;
    c.add_positions = p.add;
    c.attention_position = p.attention;
    attn::manual_seed(6);
    models::TransformerLanguageModel lm(c);
    for (double temperature : {0.0, 1.0})
      for (std::size_t context : {std::size_t(0), std::size_t(5)}) {
        CAPTURE(p.name);
        CAPTURE(temperature);
        CAPTURE(context);
        attn::Generator a(21), b(21);
        lm.transformer.use_kv_cache = true;
        const models::Generated cached = models::generate(lm, {5, 6, 7}, options(20, temperature, 0, context), a);
        lm.transformer.use_kv_cache = false;
        const models::Generated again = models::generate(lm, {5, 6, 7}, options(20, temperature, 0, context), b);
        check_same(cached, again);
      }
  }
}

TEST_CASE("last_log_probs: a Transformer reads only the token the text adds, from what the last call kept") {
  attn::manual_seed(7);
  models::TransformerLanguageModel lm(tiny());
  const Index first = {{2, 5, 6}}, longer = {{2, 5, 6, 7}};
  attn::models::DecoderState carry;
  const xt::xarray<double> a = lm.last_log_probs(first, carry);
  REQUIRE(a.shape() == std::vector<std::size_t>{kVocab});
  const std::vector<double> whole = last_log_probs(lm, {2, 5, 6});
  for (std::size_t v = 0; v < kVocab; ++v) CHECK(a(v) == doctest::Approx(whole[v]).epsilon(1e-12));
  // The second call reads the kept keys: poisoned, they change its answer; the token it adds is its own.
  attn::models::DecoderState poisoned = carry;
  bool found = false;
  for (auto& [name, t] : poisoned.tensors)
    if (name.rfind("kv.", 0) == 0 && name.find(".self.key") != std::string::npos) {
      t = attn::tensor(xt::xarray<double>(t.to_array() + 3.0), false, t.dtype());
      found = true;
    }
  REQUIRE(found);
  const xt::xarray<double> kept = lm.last_log_probs(longer, carry);
  const xt::xarray<double> from_poison = lm.last_log_probs(longer, poisoned);
  const std::vector<double> whole_longer = last_log_probs(lm, {2, 5, 6, 7});
  for (std::size_t v = 0; v < kVocab; ++v) CHECK(kept(v) == doctest::Approx(whole_longer[v]).epsilon(1e-12));
  CHECK(xt::amax(xt::abs(from_poison - kept))() > 1e-6);
  // A text that is not the last one plus a token starts over: the right answer whatever was kept.
  const Index other = {{2, 8, 8}};
  const xt::xarray<double> restarted = lm.last_log_probs(other, poisoned);
  const std::vector<double> whole_other = last_log_probs(lm, {2, 8, 8});
  for (std::size_t v = 0; v < kVocab; ++v) CHECK(restarted(v) == doctest::Approx(whole_other[v]).epsilon(1e-12));
  // The pointer sentinel model reads the whole text each time (its pointer reads the window's states).
  attn::manual_seed(8);
  models::PointerSentinelLanguageModel pointer(tiny_pointer());
  attn::models::DecoderState none;
  const xt::xarray<double> p = pointer.last_log_probs(longer, none);
  const std::vector<double> whole_p = last_log_probs(pointer, {2, 5, 6, 7});
  for (std::size_t v = 0; v < kVocab; ++v) CHECK(p(v) == doctest::Approx(whole_p[v]).epsilon(1e-12));
}
