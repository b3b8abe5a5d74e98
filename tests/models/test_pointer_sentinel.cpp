// The pointer sentinel language model and the plain LSTM language model (models/pointer_sentinel.hpp):
// PyTorch's values (tools/reference/pointer_sentinel.py), gradcheck, the window, the mixture as a
// distribution, the plain model's draws, learning what only the pointer can, bad input.
#include "../helpers.hpp"
#include "../reference.hpp"

#include "models/pointer_sentinel.hpp"
#include "nn/loss.hpp"
#include "nn/optim.hpp"

#include <cmath>
#include <map>

using attn::Index;
using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace models = attn::models;

namespace {

models::PointerSentinelConfig tiny(bool pointer, std::size_t window, bool pointer_loss) {
  models::PointerSentinelConfig c;
  c.vocab = 9, c.embed_dim = 3, c.hidden_dim = 4, c.window = window, c.pointer = pointer;
  c.pointer_loss = pointer_loss;
  return c;
}

void check_against_reference(models::PointerSentinelLM& model, const std::string& name) {
  test::Reference ref("pointer_sentinel");
  for (auto& [param, p] : model.state()) *p = ref.tensor(name, param, /*requires_grad=*/true);
  const Index inputs = xt::cast<std::int64_t>(ref.array(name, "inputs"));
  const Index targets = xt::cast<std::int64_t>(ref.array(name, "targets"));
  models::LanguageModelOutput out = model.forward(inputs, targets);
  CHECK(test::allclose(out.log_prob, ref.tensor(name, "log_prob"), 1e-13));
  CHECK(test::allclose(out.gate, ref.tensor(name, "gate"), 1e-13));
  CHECK(test::allclose(out.pointer_mass, ref.tensor(name, "pointer_mass"), 1e-13));
  Tensor loss = model.loss(out, targets);
  CHECK(loss.item() == doctest::Approx(ref.array(name, "loss")()).epsilon(1e-13));
  loss.backward();
  for (const auto& [param, p] : model.named_parameters()) {
    INFO("grad of " << param);
    CHECK(test::allclose(p.grad(), ref.tensor(name, "grad_" + param), 1e-13));
  }
  CHECK(test::allclose(model.next_word_probabilities(inputs), ref.tensor(name, "probabilities"), 1e-13));
}

}  // namespace

TEST_CASE("PointerSentinelLM equals the same model in PyTorch: log p, gate, pointer mass, loss, every gradient") {
  SUBCASE("window 3, the paper's loss") {
    models::PointerSentinelLM model(tiny(true, 3, true));
    check_against_reference(model, "pointer");
  }
  SUBCASE("a window wider than the chunk, without the pointer's loss term") {
    models::PointerSentinelLM model(tiny(true, 100, false));
    check_against_reference(model, "pointer_wide");
  }
  SUBCASE("the plain LSTM language model") {
    models::PointerSentinelLM model(tiny(false, 0, false));
    CHECK(test::parameter_names(model) ==
          std::vector<std::string>{"embedding.weight", "lstm.weight_ih_l0", "lstm.weight_hh_l0", "lstm.bias_ih_l0",
                                   "lstm.bias_hh_l0", "out.weight", "out.bias"});
    check_against_reference(model, "plain");
  }
}

TEST_CASE("PointerSentinelLM: gradcheck of the loss through every parameter (float64)") {
  attn::manual_seed(3);
  const Index inputs = {{4, 5, 4, 6, 5}, {7, 7, 8, 0, 0}};
  const Index targets = {{5, 4, 6, 5, 4}, {7, 8, 7, 0, 0}};
  for (bool pointer : {true, false}) {
    models::PointerSentinelLM model(tiny(pointer, 2, true));
    INFO("pointer " << pointer);
    CHECK_GRADCHECK([&](const Inputs&) { return model.loss(model.forward(inputs, targets), targets); },
                    test::with_parameters(model, {}));
  }
}

TEST_CASE("PointerSentinelLM: the pointer reads only its window, and the mixture is a distribution") {
  attn::manual_seed(4);
  const Index inputs = {{4, 5, 6, 4, 5, 7, 8}};
  const Index targets = {{5, 6, 4, 5, 7, 8, 4}};
  for (std::size_t L : {1, 2, 4}) {
    models::PointerSentinelLM model(tiny(true, L, true));
    models::LanguageModelOutput out = model.forward(inputs, targets);
    const xt::xarray<double> a = out.pointer.to_array(), g = out.gate.to_array(), mass = out.pointer_mass.to_array();
    for (std::size_t t = 0; t < 7; ++t) {
      double inside = 0, copies = 0;
      for (std::size_t j = 0; j < 7; ++j) {
        const bool in_window = j <= t && t - j < L;
        if (!in_window) CHECK(a(0, t, j) == 0.0);
        if (in_window) CHECK(a(0, t, j) > 0.0);
        inside += a(0, t, j);
        if (in_window && inputs(0, j) == targets(0, t)) copies += a(0, t, j);
      }
      CHECK(inside + g(0, t) == doctest::Approx(1.0).epsilon(1e-14));
      CHECK(mass(0, t) == doctest::Approx(copies).epsilon(1e-14));
    }
    // Every next-word distribution sums to 1, and p(y_t) read from it is forward()'s.
    const xt::xarray<double> p = model.next_word_probabilities(inputs).to_array();
    const xt::xarray<double> lp = out.log_prob.to_array();
    for (std::size_t t = 0; t < 7; ++t) {
      double total = 0;
      for (std::size_t w = 0; w < 9; ++w) total += p(0, t, w);
      CHECK(total == doctest::Approx(1.0).epsilon(1e-13));
      CHECK(std::log(p(0, t, std::size_t(targets(0, t)))) == doctest::Approx(lp(0, t)).epsilon(1e-12));
    }
  }
}

TEST_CASE("PointerSentinelLM: the plain model is the softmax alone, and the pointer model starts from its draws") {
  const Index inputs = {{4, 5, 6, 4}, {7, 8, 0, 0}}, targets = {{5, 6, 4, 5}, {8, 4, 0, 0}};
  attn::manual_seed(11);
  models::PointerSentinelLM plain(tiny(false, 0, false));
  attn::manual_seed(11);
  models::PointerSentinelLM pointer(tiny(true, 3, true));
  std::map<std::string, Tensor> drawn;
  for (const auto& [name, p] : pointer.named_parameters()) drawn[name] = p;
  for (const auto& [name, p] : plain.named_parameters()) {
    INFO(name);
    REQUIRE(drawn.count(name) == 1);
    CHECK(test::allclose(p, drawn.at(name), 0.0));
  }
  models::LanguageModelOutput out = plain.forward(inputs, targets);
  Tensor logits = plain.out.forward(plain.lstm.forward(plain.embedding.forward(inputs)).output);
  Tensor ce = attn::nn::cross_entropy(logits, targets, 0, 0.0, attn::nn::Reduction::None);
  CHECK(test::allclose(out.log_prob, -ce, 1e-15));
  CHECK(plain.loss(out, targets).item() == doctest::Approx(attn::nn::cross_entropy(logits, targets, 0).item()).epsilon(1e-14));
  std::size_t n = 0;
  CHECK(models::PointerSentinelLM::nll_sum(out, targets, &n) == doctest::Approx(-attn::sum(out.log_prob).item()));
  CHECK(n == 6);
  CHECK(test::allclose(out.gate, attn::ones({2, 4}), 0.0));
  // float32 runs too.
  plain.to(attn::Dtype::Float32);
  CHECK(plain.forward(inputs, targets).log_prob.dtype() == attn::Dtype::Float32);
}

TEST_CASE("PointerSentinelLM in float32: the float64 model's values, and finite where a weight rounds to 0") {
  const Index inputs = {{4, 5, 6, 4, 5, 7}, {8, 4, 8, 3, 0, 0}}, targets = {{5, 6, 4, 5, 7, 4}, {4, 8, 3, 8, 0, 0}};
  attn::manual_seed(21);
  models::PointerSentinelLM wide(tiny(true, 4, true));
  attn::manual_seed(21);
  models::PointerSentinelLM single(tiny(true, 4, true));
  single.to(attn::Dtype::Float32);
  models::LanguageModelOutput o64 = wide.forward(inputs, targets), o32 = single.forward(inputs, targets);
  CHECK(o32.log_prob.dtype() == attn::Dtype::Float32);
  CHECK(test::allclose(o32.log_prob.to(attn::Dtype::Float64), o64.log_prob, 1e-5));
  CHECK(test::allclose(o32.gate.to(attn::Dtype::Float64), o64.gate, 1e-6));
  wide.loss(o64, targets).backward();
  single.loss(o32, targets).backward();
  const auto g32 = single.named_parameters();
  for (const auto& [name, p] : wide.named_parameters())
    for (const auto& [name32, p32] : g32)
      if (name == name32) {
        INFO(name);
        CHECK(test::allclose(p32.grad().to(attn::Dtype::Float64), p.grad(), 1e-5));
      }
  // A sentinel score near -400: g_t = exp(-400) is 0 in float32. A target not in the window then has
  // log p = log g_t + log p_vocab, still finite, and its gradient too.
  for (models::PointerSentinelLM* m : {&wide, &single}) {
    const bool f32 = m->sentinel.dtype() == attn::Dtype::Float32;
    for (auto& [name, p] : m->state()) {
      const double value = name == "query.weight" ? 0.0 : name == "query.bias" ? 20.0 : name == "sentinel" ? -100.0 : 1.0;
      if (value == 1.0) continue;  // q = tanh(20) = 1 in every unit, q . s = -400
      const xt::xarray<double> v = xt::zeros<double>(p->shape()) + value;
      *p = f32 ? Tensor(xt::xarray<float>(xt::cast<float>(v)), true) : Tensor(v, true);
    }
  }
  single.zero_grad();
  o64 = wide.forward(inputs, targets);
  o32 = single.forward(inputs, targets);
  CHECK(o32.gate.to_array()(0, 0) == 0.0f);          // underflowed
  CHECK(o64.log_prob.to_array()(0, 0) < -390.0);     // "6" is not in the window of step 0
  CHECK(o32.log_prob.to_array()(0, 0) == doctest::Approx(o64.log_prob.to_array()(0, 0)).epsilon(1e-5));
  Tensor loss32 = single.loss(o32, targets);
  CHECK(std::isfinite(loss32.item()));
  loss32.backward();
  for (const auto& [name, p] : single.named_parameters()) {
    INFO(name);
    CHECK(xt::all(xt::isfinite(p.grad().to_array())));
  }
}

TEST_CASE("PointerSentinelLM learns to repeat words it has read, which the plain model cannot") {
  // Chunks "w1 .. w5 <sep> w1 .. w5" of random words from 40: the second half is only predictable by
  // looking back. Both models train alike; the pointer model's loss on the second half falls far lower.
  const std::size_t V = 44, half = 5, T = 2 * half + 1;
  auto batch = [&](attn::Generator& gen, Index& x, Index& y) {
    const std::size_t B = 16;
    x = Index(attn::Shape{B, T}), y = Index(attn::Shape{B, T});
    for (std::size_t b = 0; b < B; ++b) {
      std::vector<std::int64_t> s;
      for (std::size_t i = 0; i < half; ++i) s.push_back(gen.randint(4, 44));
      std::vector<std::int64_t> chunk = s;
      chunk.push_back(3);  // the separator
      chunk.insert(chunk.end(), s.begin(), s.end());
      chunk.push_back(2);
      for (std::size_t t = 0; t < T; ++t) x(b, t) = chunk[t], y(b, t) = chunk[t + 1];
    }
  };
  double second_half[2];
  for (int pointer = 0; pointer < 2; ++pointer) {
    attn::manual_seed(5);
    models::PointerSentinelConfig c;
    c.vocab = V, c.embed_dim = 16, c.hidden_dim = 32, c.window = 16, c.pointer = pointer == 1;
    models::PointerSentinelLM model(c);
    attn::nn::Adam adam(model.parameters(), 0.01);
    attn::Generator gen(7);
    Index x, y;
    for (int step = 0; step < 300; ++step) {
      batch(gen, x, y);
      adam.zero_grad();
      model.loss(model.forward(x, y), y).backward();
      adam.step();
    }
    attn::Generator held_out(99);
    batch(held_out, x, y);
    attn::no_grad guard;
    const xt::xarray<double> lp = model.forward(x, y).log_prob.to_array();
    double total = 0;
    for (std::size_t b = 0; b < 16; ++b)
      for (std::size_t t = half; t < 2 * half; ++t) total -= lp(b, t);  // steps reading <sep>, w1 .. w4: targets w1 .. w5
    second_half[pointer] = total / (16.0 * half);
  }
  INFO("plain " << second_half[0] << ", pointer " << second_half[1]);
  CHECK(second_half[1] < 0.3);
  CHECK(second_half[0] > 1.5);
}

TEST_CASE("PointerSentinelLM: bad input names the model and what is wrong") {
  models::PointerSentinelLM model(tiny(true, 3, true));
  const Index good = {{4, 5}}, wide = {{4, 5, 6}}, flat = {4, 5}, outside = {{4, 9}};
  CHECK_THROWS_WITH_SUBSTR(model.forward(good, wide), attn::ShapeError, "expected targets of the inputs' shape [1, 2]");
  CHECK_THROWS_WITH_SUBSTR(model.forward(flat, flat), attn::ShapeError, "expected inputs [B, T]");
  CHECK_THROWS_WITH_SUBSTR(model.forward(good, outside), attn::ValueError, "targets holds id 9, outside the vocabulary 0..8");
  CHECK_THROWS_WITH_SUBSTR(model.forward(outside, good), attn::ValueError, "inputs holds id 9");
  const Index pads = {{0, 0}};
  CHECK_THROWS_WITH_SUBSTR(model.loss(model.forward(good, pads), pads), attn::ValueError, "every target is <pad>");
  models::PointerSentinelConfig c = tiny(true, 0, true);
  CHECK_THROWS_WITH_SUBSTR(models::PointerSentinelLM{c}, attn::ValueError, "window 0");
  c.window = 3, c.vocab = 0;
  CHECK_THROWS_WITH_SUBSTR(models::PointerSentinelLM{c}, attn::ValueError, "vocab 0");
}
