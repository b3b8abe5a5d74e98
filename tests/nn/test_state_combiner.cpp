// nn::BasicStateCombiner and nn::ChildSumStateCombiner, how a multi-source model starts its
// decoder from several encoders (Zoph & Knight 2016): PyTorch's values and gradients
// (tools/reference/multi_source.py), gradcheck, and bad input.
#include "../helpers.hpp"
#include "../reference.hpp"

#include "nn/state_combiner.hpp"

using attn::Tensor;
using attn::nn::LSTMState;

namespace {

void check_against_reference(attn::nn::StateCombiner& combiner, const std::string& name) {
  test::Reference ref("multi_source");
  for (auto& [param, p] : combiner.state()) *p = ref.tensor(name, param, /*requires_grad=*/true);
  std::vector<LSTMState> states;
  for (int k = 0; k < 2; ++k)
    states.push_back({ref.tensor(name, "h" + std::to_string(k), true), ref.tensor(name, "c" + std::to_string(k), true)});
  LSTMState s = combiner(states);
  CHECK(test::allclose(s.h, ref.tensor(name, "h"), 1e-12));
  CHECK(test::allclose(s.c, ref.tensor(name, "c"), 1e-12));
  attn::sum(s.h * ref.tensor(name, "rh") + s.c * ref.tensor(name, "rc")).backward();
  for (int k = 0; k < 2; ++k) {
    CHECK(test::allclose(states[k].h.grad(), ref.tensor(name, "grad_h" + std::to_string(k)), 1e-12));
    CHECK(test::allclose(states[k].c.grad(), ref.tensor(name, "grad_c" + std::to_string(k)), 1e-12));
  }
  for (const auto& [param, p] : combiner.named_parameters()) {
    INFO("grad of " << param);
    CHECK(test::allclose(p.grad(), ref.tensor(name, "grad_" + param), 1e-12));
  }
}

void gradcheck_combiner(attn::nn::StateCombiner& combiner) {
  std::vector<Tensor> inputs = test::with_parameters(
      combiner, {test::randn({2, 3}, 1), test::randn({2, 3}, 2), test::randn({2, 3}, 3), test::randn({2, 3}, 4)});
  CHECK_GRADCHECK(
      [&](const std::vector<Tensor>& in) {
        LSTMState s = combiner({{in[0], in[1]}, {in[2], in[3]}});
        return attn::concat({s.h, s.c}, 1);
      },
      inputs);
}

}  // namespace

TEST_CASE("BasicStateCombiner equals PyTorch: h = tanh(W [h1; h2]), c = c1 + c2") {
  attn::nn::BasicStateCombiner combiner(4, 2);
  check_against_reference(combiner, "basic");
}

TEST_CASE("ChildSumStateCombiner equals PyTorch: one forget gate per source") {
  attn::nn::ChildSumStateCombiner combiner(4, 2);
  check_against_reference(combiner, "child_sum");
}

TEST_CASE("state combiners: gradcheck over both sources' states and every weight") {
  attn::manual_seed(1);
  attn::nn::BasicStateCombiner basic(3, 2);
  gradcheck_combiner(basic);
  attn::nn::ChildSumStateCombiner child_sum(3, 2);
  gradcheck_combiner(child_sum);
}

TEST_CASE("ChildSumStateCombiner: a forget gate shut on one source drops its cell") {
  attn::manual_seed(2);
  attn::nn::ChildSumStateCombiner combiner(3, 2);
  LSTMState a{test::randn({1, 3}, 5, false), test::randn({1, 3}, 6, false)};
  LSTMState b{test::randn({1, 3}, 7, false), test::randn({1, 3}, 8, false)};
  combiner.forget[1].bias = attn::ones({3}) * -1e3;  // f^2 = sigmoid(-1000) = 0: the second cell counts for nothing
  LSTMState with_b = combiner({a, b});
  LSTMState other_c = combiner({a, {b.h, b.c * 7.0}});
  CHECK(test::allclose(with_b.c, other_c.c, 1e-14));
}

TEST_CASE("state combiners: bad input is named") {
  attn::nn::ChildSumStateCombiner combiner(3, 2);
  LSTMState ok{attn::zeros({2, 3}), attn::zeros({2, 3})};
  CHECK_THROWS_WITH_SUBSTR(combiner({ok}), attn::ValueError, "ChildSumStateCombiner: expected 2 states, one per source, got 1");
  CHECK_THROWS_WITH_SUBSTR(combiner({ok, {attn::zeros({2, 4}), attn::zeros({2, 4})}}), attn::ShapeError,
                           "expected state 1 h and c [B, 3] with the B of state 0, got h [2, 4]");
  CHECK_THROWS_WITH_SUBSTR(combiner({ok, {attn::zeros({1, 3}), attn::zeros({1, 3})}}), attn::ShapeError, "state 1");
  CHECK_THROWS_WITH_SUBSTR(attn::nn::BasicStateCombiner(0, 2), attn::ValueError,
                           "BasicStateCombiner: hidden_size must be positive");
  CHECK_THROWS_WITH_SUBSTR(attn::nn::ChildSumStateCombiner(3, 0), attn::ValueError,
                           "ChildSumStateCombiner: sources must be positive");
}
