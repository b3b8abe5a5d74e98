// The switch between the fused fast path and the composed teaching path
// (core/kernels.hpp), and every op it switches: the fused version against the
// composed one, values and gradients in f64 and f32, and a gradcheck of each path.
#include "../helpers.hpp"

#include <functional>
#include <stdexcept>

using attn::Tensor;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

namespace {

struct Run {
  Tensor y;
  std::vector<Tensor> grads;
};

// f on fresh leaves holding `inputs` as `dtype`, fused ops on or off; backward of
// sum(y * r) for a fixed random r gives every input's gradient.
Run run(bool fused, const Fn& f, const std::vector<Tensor>& inputs, attn::Dtype dtype) {
  attn::FusedOps guard(fused);
  std::vector<Tensor> in;
  for (const Tensor& x : inputs) {
    Tensor leaf = x.detach().to(dtype);
    leaf.requires_grad_(true);
    in.push_back(leaf);
  }
  Run r{f(in), {}};
  const Tensor weights = test::randn(r.y.shape(), 99, false).to(dtype);
  attn::sum(r.y * weights).backward();
  for (const Tensor& x : in) r.grads.push_back(x.grad());
  return r;
}

void check_fused_matches_composed(const Fn& f, const std::vector<Tensor>& inputs) {
  for (attn::Dtype dtype : {attn::Dtype::Float64, attn::Dtype::Float32}) {
    const double tol = dtype == attn::Dtype::Float64 ? 1e-10 : 2e-4;
    INFO("dtype " << attn::dtype_name(dtype));
    const Run fused = run(true, f, inputs, dtype), composed = run(false, f, inputs, dtype);
    CHECK(fused.y.dtype() == dtype);
    CHECK(test::allclose(fused.y, composed.y, tol));
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      INFO("gradient of input " << i);
      CHECK(test::allclose(fused.grads[i], composed.grads[i], tol));
    }
  }
  for (bool fused : {true, false}) {
    INFO("gradcheck, fused ops " << (fused ? "on" : "off"));
    attn::FusedOps guard(fused);
    CHECK_GRADCHECK(f, inputs);
  }
}

attn::Mask some_blocked(const attn::Shape& shape) {  // every third entry, and one whole lane
  attn::Mask m = attn::Mask::from_shape(shape);
  for (std::size_t i = 0; i < m.size(); ++i) m.flat(i) = i % 3 == 1 || i < shape.back();
  return m;
}

}  // namespace

TEST_CASE("the switch: fused ops on by default, set_fused_ops and a scoped guard") {
  CHECK(attn::fused_ops_enabled());
  {
    attn::FusedOps off(false);
    CHECK_FALSE(attn::fused_ops_enabled());
    {
      attn::FusedOps on(true);
      CHECK(attn::fused_ops_enabled());
    }
    CHECK_FALSE(attn::fused_ops_enabled());
  }
  CHECK(attn::fused_ops_enabled());
  try {
    attn::FusedOps off(false);
    throw std::runtime_error("leaving the scope by an exception");
  } catch (const std::runtime_error&) {
  }
  CHECK(attn::fused_ops_enabled());
  attn::set_fused_ops(false);
  CHECK_FALSE(attn::fused_ops_enabled());
  attn::set_fused_ops(true);
  CHECK(attn::fused_ops_enabled());
}

TEST_CASE("matmul and linear: BLAS planned products against xt::linalg's") {
  auto mm = [](const std::vector<Tensor>& in) { return attn::matmul(in[0], in[1]); };
  check_fused_matches_composed(mm, {test::randn({3, 4}, 1), test::randn({4, 5}, 2)});
  check_fused_matches_composed(mm, {test::randn({2, 3, 4}, 3), test::randn({4, 2}, 4)});         // folded
  check_fused_matches_composed(mm, {test::randn({2, 1, 3, 4}, 5), test::randn({3, 4, 2}, 6)});   // broadcast batch
  check_fused_matches_composed(mm, {test::randn({4}, 7), test::randn({2, 4, 3}, 8)});            // 1-D a
  check_fused_matches_composed(mm, {test::randn({2, 3, 4}, 9), test::randn({4}, 10)});           // 1-D b
  check_fused_matches_composed(mm, {test::randn({4}, 11), test::randn({4}, 12)});                // dot
  auto lin = [](const std::vector<Tensor>& in) { return attn::linear(in[0], in[1], in[2]); };
  check_fused_matches_composed(lin, {test::randn({2, 3, 4}, 13), test::randn({5, 4}, 14), test::randn({5}, 15)});
  check_fused_matches_composed(lin, {test::randn({3, 4}, 16), test::randn({5, 4}, 17), test::randn({3, 5}, 18)});
  attn::FusedOps off(false);
  CHECK_THROWS_WITH_SUBSTR(attn::matmul(test::randn({2, 3}, 1), test::randn({4, 2}, 2)), attn::ShapeError,
                           "matmul: expected a.shape[-1] == b.shape[-2]");
  CHECK_THROWS_WITH_SUBSTR(attn::matmul(test::randn({2, 2, 3}, 1), test::randn({3, 3, 2}, 2)), attn::ShapeError,
                           "matmul: shapes [2] and [3] do not broadcast");
}

TEST_CASE("softmax, log_softmax, masked_softmax: lane loops against xtensor expressions") {
  for (long dim : {-1L, 1L, 0L}) {
    INFO("dim " << dim);
    check_fused_matches_composed([dim](const std::vector<Tensor>& in) { return attn::softmax(in[0], dim); },
                                 {test::randn({3, 4, 5}, 20)});
    check_fused_matches_composed([dim](const std::vector<Tensor>& in) { return attn::log_softmax(in[0], dim); },
                                 {test::randn({3, 4, 5}, 21)});
  }
  const attn::Mask mask = some_blocked({2, 3, 5});
  check_fused_matches_composed(
      [&mask](const std::vector<Tensor>& in) { return attn::masked_softmax(in[0], mask, -1); },
      {test::randn({2, 3, 5}, 22)});
  attn::FusedOps off(false);  // a lane blocked entirely is all 0 on the composed path too
  const Tensor w = attn::masked_softmax(test::randn({2, 3, 5}, 23), mask, -1);
  for (std::size_t j = 0; j < 5; ++j) CHECK(w.data<double>()(0, 0, j) == 0.0);
}

TEST_CASE("cross_entropy: one op against the target distribution, log_softmax, mul and sum") {
  attn::Index targets = {{3, 0, 4, 2}, {1, 4, 4, 0}};  // [2, 4]; 4 is ignore_index below
  for (double smoothing : {0.0, 0.1}) {
    for (auto reduction : {attn::nn::Reduction::None, attn::nn::Reduction::Mean, attn::nn::Reduction::Sum}) {
      INFO("label_smoothing " << smoothing << ", reduction " << static_cast<int>(reduction));
      check_fused_matches_composed(
          [&](const std::vector<Tensor>& in) { return attn::nn::cross_entropy(in[0], targets, 4, smoothing, reduction); },
          {test::randn({2, 4, 6}, 24)});
    }
  }
  // rows of large logits: the log-sum-exp must not overflow
  check_fused_matches_composed(
      [&](const std::vector<Tensor>& in) { return attn::nn::cross_entropy(in[0] * 300.0, targets, 4); },
      {test::randn({2, 4, 6}, 25)});
  attn::FusedOps on(true);  // bad targets are refused on the fused path too
  CHECK_THROWS_WITH_SUBSTR(attn::nn::cross_entropy(test::randn({2, 4, 6}, 26), attn::Index{{3, 0, 4, 6}, {1, 4, 4, 0}}),
                           attn::ValueError, "cross_entropy: target 6 is out of range for 6 classes");
}

TEST_CASE("layer_norm: fused against mean, sub, mul, sqrt, div") {
  check_fused_matches_composed(
      [](const std::vector<Tensor>& in) { return attn::layer_norm(in[0], {6}, in[1], in[2]); },
      {test::randn({3, 6}, 30), test::randn({6}, 31), test::randn({6}, 32)});
  check_fused_matches_composed([](const std::vector<Tensor>& in) { return attn::layer_norm(in[0], {2, 3}); },
                               {test::randn({4, 2, 3}, 33)});
}

TEST_CASE("the LSTM cell and lstm_sequence: fused against chunk, sigmoid, tanh, mul, add") {
  check_fused_matches_composed(
      [](const std::vector<Tensor>& in) {
        const Tensor c = attn::lstm_cell_c(in[0], in[1]);
        return attn::concat({c, attn::lstm_cell_h(in[0], c)}, 1);
      },
      {test::randn({2, 12}, 40), test::randn({2, 3}, 41)});
  for (bool padded : {false, true}) {
    INFO("lengths " << (padded ? "{3, 2}" : "none"));
    const std::vector<std::int64_t> lengths = padded ? std::vector<std::int64_t>{3, 2} : std::vector<std::int64_t>{};
    check_fused_matches_composed(
        [lengths](const std::vector<Tensor>& in) {
          return attn::lstm_sequence({{in[0], in[1], in[2], in[3], false}, {in[4], in[1], in[2], in[3], true}},
                                     lengths);  // [T + 2, B, 2H]
        },
        {test::randn({3, 2, 8}, 42), test::randn({2, 2}, 43), test::randn({2, 2}, 44), test::randn({8, 2}, 45),
         test::randn({3, 2, 8}, 46)});
  }
}

TEST_CASE("additive_score and split/merge_heads: fused against their compositions") {
  check_fused_matches_composed(
      [](const std::vector<Tensor>& in) { return attn::additive_score(in[0], in[1], in[2]); },
      {test::randn({2, 3, 4}, 50), test::randn({2, 5, 4}, 51), test::randn({4}, 52)});
  check_fused_matches_composed([](const std::vector<Tensor>& in) { return attn::split_heads(in[0], 2); },
                               {test::randn({2, 3, 4}, 53)});
  check_fused_matches_composed([](const std::vector<Tensor>& in) { return attn::merge_heads(in[0]); },
                               {test::randn({2, 2, 3, 2}, 54)});
}

TEST_CASE("a layer both ways: nn::LSTM and nn::MultiheadAttention give the same values and gradients") {
  attn::manual_seed(7);
  attn::nn::LSTM lstm(3, 4, attn::nn::RNNOptions{});
  const Tensor x = test::randn({5, 2, 3}, 60);
  auto output_and_grad = [&](bool fused) {
    attn::FusedOps guard(fused);
    lstm.zero_grad();
    Tensor y = lstm.forward(x).output;
    attn::sum(y * y).backward();
    return std::make_pair(y, lstm.parameters()[0].grad());
  };
  const auto [y_fused, g_fused] = output_and_grad(true);
  const auto [y_composed, g_composed] = output_and_grad(false);
  CHECK(test::allclose(y_fused, y_composed, 1e-12));
  CHECK(test::allclose(g_fused, g_composed, 1e-12));
}
