#include "../helpers.hpp"
#include "../reference.hpp"
#include "nn/init.hpp"

#include <cmath>

using attn::Mask;
using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace nn = attn::nn;

namespace {

Mask ref_mask(const test::Reference& ref, const std::string& c, const std::string& name) {
  return xt::cast<bool>(ref.array(c, name));
}

// Copies the recorded weights into mha, under PyTorch's names.
void load_weights(nn::MultiheadAttention& mha, const test::Reference& ref, const std::string& c) {
  for (auto& [name, p] : mha.named_parameters()) {
    const xt::xarray<double> recorded = ref.array(c, name);
    REQUIRE(p.shape() == attn::Shape(recorded.shape().begin(), recorded.shape().end()));
    p.data<double>() = recorded;
  }
}

// Output, weights, and the gradient of every input and weight against PyTorch.
void check_against_reference(nn::MultiheadAttention& mha, const test::Reference& ref, const std::string& c,
                             const Inputs& inputs, const std::vector<std::string>& input_names,
                             const nn::MultiheadAttentionOutput& out) {
  CHECK(test::allclose(out.output, ref.tensor(c, "output"), 1e-10));
  CHECK(test::allclose(out.weights, ref.tensor(c, "weights"), 1e-10));
  Tensor loss = attn::sum(out.output * ref.tensor(c, "grad_output")) + attn::sum(out.weights * ref.tensor(c, "grad_weights"));
  loss.backward();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    INFO("input " << input_names[i]);
    CHECK(test::allclose(inputs[i].grad(), ref.tensor(c, "grad_" + input_names[i]), 1e-10));
  }
  for (const auto& [name, p] : mha.named_parameters()) {
    INFO("parameter " << name);
    CHECK(test::allclose(p.grad(), ref.tensor(c, "grad_" + name), 1e-10));
  }
}

bool all_finite(const Tensor& t) {
  for (double x : t.to_array())
    if (!std::isfinite(x)) return false;
  return true;
}

}  // namespace

TEST_CASE("MultiheadAttention: PyTorch's parameter names, shapes and initialization") {
  attn::manual_seed(1);
  nn::MultiheadAttention mha(8, 2);
  std::vector<std::string> names;
  for (const auto& entry : mha.named_parameters()) names.push_back(entry.first);
  CHECK(names == std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"});
  CHECK(mha.in_proj_weight.shape() == attn::Shape{24, 8});
  CHECK(mha.head_dim == 4);
  CHECK(xt::all(xt::equal(mha.in_proj_bias.to_array(), 0.0)));
  CHECK(xt::all(xt::equal(mha.out_proj.bias.to_array(), 0.0)));
  const double bound = std::sqrt(6.0 / (8 + 24));  // xavier_uniform_: fan_in 8, fan_out 24
  CHECK(xt::amax(xt::abs(mha.in_proj_weight.to_array()))() <= bound);
  CHECK(xt::amax(xt::abs(mha.in_proj_weight.to_array()))() > 0.8 * bound);
  nn::MultiheadAttention no_bias(8, 2, 0.0, false);
  CHECK(no_bias.named_parameters().size() == 2);
}

TEST_CASE("MultiheadAttention matches PyTorch: self-attention, key padding, causal mask, averaged weights") {
  test::Reference ref("nn_attention");
  const std::string c = "mha_self_causal";
  nn::MultiheadAttention mha(6, 2);
  load_weights(mha, ref, c);
  Tensor x = ref.tensor(c, "x", true);
  auto out = mha(x, x, x, ref_mask(ref, c, "key_padding_mask"), true, ref_mask(ref, c, "attn_mask"));
  CHECK(out.weights.shape() == attn::Shape{2, 4, 4});
  check_against_reference(mha, ref, c, {x}, {"x"}, out);
  CHECK(mha.last_weights().shape() == attn::Shape{2, 2, 4, 4});
}

TEST_CASE("MultiheadAttention matches PyTorch: cross-attention, [B*H, Tq, Tk] mask, per-head weights") {
  test::Reference ref("nn_attention");
  const std::string c = "mha_cross_heads";
  nn::MultiheadAttention mha(6, 3);
  load_weights(mha, ref, c);
  Tensor q = ref.tensor(c, "query", true), k = ref.tensor(c, "key", true), v = ref.tensor(c, "value", true);
  auto out = mha(q, k, v, ref_mask(ref, c, "key_padding_mask"), true, ref_mask(ref, c, "attn_mask"), false);
  CHECK(out.weights.shape() == attn::Shape{2, 3, 3, 5});
  check_against_reference(mha, ref, c, {q, k, v}, {"query", "key", "value"}, out);
}

TEST_CASE("MultiheadAttention matches PyTorch: no biases, no masks") {
  test::Reference ref("nn_attention");
  const std::string c = "mha_nobias";
  nn::MultiheadAttention mha(4, 2, 0.0, false);
  load_weights(mha, ref, c);
  Tensor q = ref.tensor(c, "query", true), k = ref.tensor(c, "key", true), v = ref.tensor(c, "value", true);
  auto out = mha(q, k, v);
  check_against_reference(mha, ref, c, {q, k, v}, {"query", "key", "value"}, out);
}

TEST_CASE("MultiheadAttention: gradients with both masks") {
  attn::manual_seed(2);
  nn::MultiheadAttention mha(4, 2);
  attn::nn::init::uniform_(mha.in_proj_bias, -0.5, 0.5);  // non-zero biases get checked too
  attn::nn::init::uniform_(mha.out_proj.bias, -0.5, 0.5);
  Mask padding = nn::padding_mask(attn::Index{3, 2}, 3);
  Mask causal = nn::causal_mask(3);
  Inputs inputs{test::randn({2, 3, 4}, 3), test::randn({2, 3, 4}, 4), test::randn({2, 3, 4}, 5)};
  for (const Tensor& p : mha.parameters()) inputs.push_back(p);
  CHECK_GRADCHECK([&](const Inputs& in) { return mha(in[0], in[1], in[2], padding, true, causal).output; }, inputs);
  CHECK_GRADCHECK([&](const Inputs& in) { return mha(in[0], in[1], in[2], padding, true, causal, false).weights; },
                  inputs);
}

TEST_CASE("MultiheadAttention: weights sum to 1 over allowed keys; a fully masked query gives no NaN") {
  attn::manual_seed(3);
  nn::MultiheadAttention mha(4, 2);
  Tensor x = test::randn({2, 3, 4}, 6);
  Mask padding = nn::padding_mask(attn::Index{2, 0}, 3);  // sequence 1 has no valid key at all
  auto out = mha(x, x, x, padding, true, std::nullopt, false);
  const auto w = out.weights.to_array();  // [B, H, Tq, Tk]
  for (std::size_t h = 0; h < 2; ++h)
    for (std::size_t i = 0; i < 3; ++i) {
      CHECK(w(0, h, i, 0) + w(0, h, i, 1) == doctest::Approx(1.0).epsilon(1e-14));
      CHECK(w(0, h, i, 2) == 0.0);
      for (std::size_t j = 0; j < 3; ++j) CHECK(w(1, h, i, j) == 0.0);
    }
  CHECK(all_finite(out.output));
  attn::sum(out.output).backward();
  CHECK(all_finite(x.grad()));
}

TEST_CASE("MultiheadAttention: need_weights=false, dropout only while training, float32") {
  attn::manual_seed(4);
  nn::MultiheadAttention mha(4, 2, 0.5);
  Tensor x = test::randn({1, 3, 4}, 7, false);
  CHECK_FALSE(mha(x, x, x, std::nullopt, false).weights.defined());
  mha.eval();
  auto a = mha(x, x, x), b = mha(x, x, x);
  CHECK(test::allclose(a.output, b.output, 0.0));
  auto clean = mha(x, x, x, std::nullopt, true, std::nullopt, false).weights.to_array();
  mha.train();
  const auto dropped = mha(x, x, x, std::nullopt, true, std::nullopt, false).weights.to_array();
  std::size_t zeros = 0, kept = 0;
  for (std::size_t i = 0; i < dropped.size(); ++i) {  // each weight is dropped (0) or kept and scaled by 1 / (1 - p)
    if (dropped.flat(i) == 0.0) ++zeros;
    else if (std::abs(dropped.flat(i) - 2.0 * clean.flat(i)) < 1e-12) ++kept;
  }
  CHECK(zeros + kept == dropped.size());
  CHECK(zeros > 0);
  CHECK(kept > 0);

  mha.eval();
  mha.to(attn::Dtype::Float32);
  auto f32 = mha(x.to(attn::Dtype::Float32), x.to(attn::Dtype::Float32), x.to(attn::Dtype::Float32));
  CHECK(f32.output.dtype() == attn::Dtype::Float32);
  CHECK(test::allclose(f32.output, a.output, 1e-5));
}

TEST_CASE("MultiheadAttention rejects bad shapes with clear messages") {
  CHECK_THROWS_WITH_SUBSTR(nn::MultiheadAttention(10, 3), attn::ValueError,
                           "MultiheadAttention: embed_dim (10) must be a positive multiple of num_heads (3)");
  nn::MultiheadAttention mha(4, 2);
  Tensor x = attn::zeros({2, 3, 4});
  CHECK_THROWS_WITH_SUBSTR(mha(attn::zeros({2, 3, 5}), x, x), attn::ShapeError,
                           "MultiheadAttention: expected batch-first inputs [B, T, 4], got query [2, 3, 5]");
  CHECK_THROWS_WITH_SUBSTR(mha(x, attn::zeros({1, 3, 4}), attn::zeros({1, 3, 4})), attn::ShapeError,
                           "query, key and value must share B");
  CHECK_THROWS_WITH_SUBSTR(mha(x, x, attn::zeros({2, 2, 4})), attn::ShapeError,
                           "key and value must have the same length Tk");
  CHECK_THROWS_WITH_SUBSTR(mha(x, x, x, Mask(xt::zeros<bool>({2, 4}))), attn::ShapeError,
                           "MultiheadAttention: expected key_padding_mask [B, Tk] = [2, 3], got [2, 4]");
  CHECK_THROWS_WITH_SUBSTR(mha(x, x, x, std::nullopt, true, Mask(xt::zeros<bool>({3, 4}))), attn::ShapeError,
                           "MultiheadAttention: expected attn_mask [3, 3]");
  CHECK_THROWS_WITH_SUBSTR(mha(x, x, x, std::nullopt, true, Mask(xt::zeros<bool>({2, 3, 3}))), attn::ShapeError,
                           "expected attn_mask [Tq, Tk] = [3, 3] or [B * H, Tq, Tk] = [4, 3, 3], got [2, 3, 3]");
}
