// nn::PyramidalLSTM, the listener's layer in Listen, Attend and Spell: the pairing of
// steps, the halved lengths, padding, PyTorch's values (tools/reference/las.py) and
// gradients against finite differences.
#include "../helpers.hpp"
#include "../reference.hpp"

#include "nn/pyramidal_lstm.hpp"

using attn::Tensor;
using attn::nn::PyramidalLSTM;

namespace {

std::vector<std::size_t> lengths_of(const attn::Index& values) { return {values.begin(), values.end()}; }

}  // namespace

TEST_CASE("pair_steps puts steps 2i and 2i+1 side by side, with a zero step after an odd count") {
  Tensor x(xt::xarray<double>{{{1, 2}, {3, 4}, {5, 6}}});  // [1, 3, 2]
  const Tensor paired = attn::nn::pair_steps(x);
  CHECK(paired.shape() == attn::Shape{1, 2, 4});
  CHECK(test::allclose(paired, Tensor(xt::xarray<double>{{{1, 2, 3, 4}, {5, 6, 0, 0}}}), 0.0));
  Tensor even = attn::reshape(Tensor(xt::xarray<double>{1, 2, 3, 4}), {1, 4, 1});  // [1, 4, 1]
  CHECK(test::allclose(attn::nn::pair_steps(even), Tensor(xt::xarray<double>{{{1, 2}, {3, 4}}}), 0.0));
  CHECK(attn::nn::halve_lengths({7, 4, 1}) == std::vector<std::size_t>{4, 2, 1});
  CHECK_THROWS_WITH_SUBSTR(attn::nn::pair_steps(attn::zeros({3, 4})), attn::ShapeError, "pair_steps: expected x [B, T, F]");
}

TEST_CASE("PyramidalLSTM equals PyTorch's LSTM over the paired, packed steps") {
  test::Reference ref("las");
  PyramidalLSTM layer(4, 3);
  for (auto& [name, p] : layer.state()) *p = ref.tensor("pyramid", name, /*requires_grad=*/true);
  Tensor x = ref.tensor("pyramid", "x", true);
  attn::nn::PyramidalOutput r = layer(x, lengths_of(ref.index("pyramid", "lengths")));
  CHECK(r.lengths == lengths_of(ref.index("pyramid", "out_lengths")));
  CHECK(test::allclose(r.output, ref.tensor("pyramid", "output"), 1e-12));
  attn::sum(r.output * ref.tensor("pyramid", "r")).backward();
  CHECK(test::allclose(x.grad(), ref.tensor("pyramid", "grad_x"), 1e-12));
  for (const auto& [name, p] : layer.named_parameters()) {
    INFO("grad of " << name);
    CHECK(test::allclose(p.grad(), ref.tensor("pyramid", "grad_" + name), 1e-12));
  }
}

TEST_CASE("PyramidalLSTM: padding changes nothing, and past its end a sequence reads zeros") {
  attn::manual_seed(3);
  PyramidalLSTM layer(2, 3);
  Tensor alone = test::randn({1, 5, 2}, 1, false);                  // 5 steps: the last pairs with a zero step
  Tensor garbage = test::randn({1, 3, 2}, 2, false);
  Tensor padded = attn::concat({alone, garbage * 100.0}, 1);        // [1, 8, 2], lengths {5}
  Tensor other = test::randn({1, 8, 2}, 4, false);
  Tensor batch = attn::concat({padded, other}, 0);                  // [2, 8, 2]
  attn::nn::PyramidalOutput a = layer(alone);
  attn::nn::PyramidalOutput b = layer(batch, {5, 8});
  CHECK(a.lengths == std::vector<std::size_t>{3});
  CHECK(b.lengths == std::vector<std::size_t>{3, 4});
  CHECK(test::allclose(attn::narrow(attn::select(b.output, 0, 0), 0, 0, 3), attn::select(a.output, 0, 0), 1e-14));
  CHECK(test::allclose(attn::select(attn::select(b.output, 0, 0), 0, 3), attn::zeros({6}), 0.0));  // state 3 is padding
}

TEST_CASE("PyramidalLSTM: gradcheck over the input and every weight, with uneven lengths") {
  attn::manual_seed(5);
  PyramidalLSTM layer(2, 2);
  Tensor x = test::randn({2, 5, 2}, 6);
  std::vector<Tensor> inputs = test::with_parameters(layer, {x});
  CHECK_GRADCHECK([&](const std::vector<Tensor>& in) { return layer(in[0], {5, 3}).output; }, inputs);
}

TEST_CASE("PyramidalLSTM: bad input is named") {
  PyramidalLSTM layer(2, 3);
  CHECK_THROWS_WITH_SUBSTR(layer(attn::zeros({1, 4, 3})), attn::ShapeError, "PyramidalLSTM: expected x [B, T, 2]");
  CHECK_THROWS_WITH_SUBSTR(layer(attn::zeros({2, 4, 2}), {4}), attn::ValueError, "2 sequences but 1 lengths");
  CHECK_THROWS_WITH_SUBSTR(layer(attn::zeros({2, 4, 2}), {4, 5}), attn::ValueError, "lengths[1] = 5");
  CHECK_THROWS_WITH_SUBSTR(layer(attn::zeros({2, 4, 2}), {0, 4}), attn::ValueError, "lengths[0] = 0");
  CHECK_THROWS_WITH_SUBSTR(PyramidalLSTM(0, 3), attn::ValueError, "input_size and hidden_size must be positive");
}
