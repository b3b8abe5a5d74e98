#include "../helpers.hpp"
#include "../reference.hpp"

#include "nn/transformer.hpp"

#include <xtensor/xview.hpp>

#include <set>

using attn::Mask;
using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace nn = attn::nn;

namespace {

Mask ref_mask(const test::Reference& ref, const std::string& c, const std::string& name) {
  return xt::cast<bool>(ref.array(c, name));
}

// Copies the recorded weights into the module, under PyTorch's names: every one must exist.
void load_weights(nn::Module& module, const test::Reference& ref, const std::string& c) {
  for (auto& [name, p] : module.named_parameters()) {
    INFO("parameter " << name);
    REQUIRE(ref.has(c, name));
    xt::xarray<double> value = ref.array(c, name);
    REQUIRE(p.shape() == attn::Shape(value.shape().begin(), value.shape().end()));
    p.data<double>() = value;
  }
}

// The output, then the gradient of sum(output * grad_output) for every input and weight.
void check_against_reference(nn::Module& module, const test::Reference& ref, const std::string& c, const Tensor& out,
                             const Inputs& inputs, const std::vector<std::string>& input_names) {
  CHECK(test::allclose(out, ref.tensor(c, "output"), 1e-10));
  attn::sum(out * ref.tensor(c, "grad_output")).backward();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    INFO("input " << input_names[i]);
    CHECK(test::allclose(inputs[i].grad(), ref.tensor(c, "grad_" + input_names[i]), 1e-10));
  }
  for (const auto& [name, p] : module.named_parameters()) {
    INFO("parameter " << name);
    CHECK(test::allclose(p.grad(), ref.tensor(c, "grad_" + name), 1e-10));
  }
}

std::vector<std::string> names_of(const nn::Module& module) {
  std::vector<std::string> names;
  for (const auto& entry : module.named_parameters()) names.push_back(entry.first);
  return names;
}

// Inputs of a gradcheck: x, then every parameter of the module (gradcheck moves
// their values in place, so calling the module sees the change).
Inputs with_parameters(const Inputs& xs, const nn::Module& module) {
  Inputs all = xs;
  for (const Tensor& p : module.parameters()) all.push_back(p);
  return all;
}

}  // namespace

TEST_CASE("TransformerEncoderLayer and TransformerDecoderLayer: PyTorch's parameter names") {
  nn::TransformerEncoderLayer enc(8, 2, 16);
  CHECK(names_of(enc) == std::vector<std::string>{
                             "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                             "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
                             "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"});
  nn::TransformerDecoderLayer dec(8, 2, 16);
  test::Reference ref("nn_transformer");
  for (const auto& name : names_of(dec)) {
    INFO(name);
    CHECK(ref.has("dec_post", name));
  }
  CHECK(names_of(dec).size() == 18);
  CHECK(dec.multihead_attn.in_proj_weight.shape() == attn::Shape{24, 8});
  CHECK(dec.linear1.weight.shape() == attn::Shape{16, 8});
  // The module tree lists the dropouts too, under PyTorch's names.
  std::set<std::string> children;
  for (const auto& [name, child] : dec.named_children()) children.insert(name);
  CHECK(children.count("dropout3") == 1);
  CHECK(children.count("dropout") == 1);
}

TEST_CASE("TransformerEncoderLayer matches PyTorch: post-norm, relu, key padding") {
  test::Reference ref("nn_transformer");
  const std::string c = "enc_post";
  nn::TransformerEncoderLayer layer(8, 2, 16, 0.0);
  load_weights(layer, ref, c);
  Tensor src = ref.tensor(c, "src", true);
  Tensor out = layer(src, std::nullopt, ref_mask(ref, c, "src_key_padding_mask"));
  check_against_reference(layer, ref, c, out, {src}, {"src"});
  CHECK(layer.self_attention_weights().shape() == attn::Shape{2, 2, 4, 4});
  // Row b = 1 has length 2: no query attends to its keys 2 and 3.
  auto w = layer.self_attention_weights().to_array();
  CHECK(xt::all(xt::equal(xt::view(w, 1, xt::all(), xt::all(), xt::range(2, 4)), 0.0)));
}

TEST_CASE("TransformerEncoderLayer matches PyTorch: pre-norm (norm_first), gelu, causal mask and padding") {
  test::Reference ref("nn_transformer");
  const std::string c = "enc_pre_causal";
  nn::TransformerEncoderLayer layer(8, 2, 16, 0.0, nn::Activation::GELU, 1e-5, /*norm_first=*/true);
  load_weights(layer, ref, c);
  Tensor src = ref.tensor(c, "src", true);
  Tensor out = layer(src, ref_mask(ref, c, "src_mask"), ref_mask(ref, c, "src_key_padding_mask"));
  check_against_reference(layer, ref, c, out, {src}, {"src"});
}

TEST_CASE("TransformerDecoderLayer matches PyTorch: post-norm and pre-norm, causal mask, both paddings") {
  test::Reference ref("nn_transformer");
  for (const std::string c : {"dec_post", "dec_pre"}) {
    INFO("case " << c);
    const bool pre = c == "dec_pre";
    nn::TransformerDecoderLayer layer(8, 2, 16, 0.0, nn::Activation::ReLU, pre ? 1e-3 : 1e-5, pre);
    load_weights(layer, ref, c);
    Tensor tgt = ref.tensor(c, "tgt", true), memory = ref.tensor(c, "memory", true);
    Tensor out = layer(tgt, memory, ref_mask(ref, c, "tgt_mask"), std::nullopt,
                       ref_mask(ref, c, "tgt_key_padding_mask"), ref_mask(ref, c, "memory_key_padding_mask"));
    check_against_reference(layer, ref, c, out, {tgt, memory}, {"tgt", "memory"});
    CHECK(layer.self_attention_weights().shape() == attn::Shape{2, 2, 3, 3});
    CHECK(layer.cross_attention_weights().shape() == attn::Shape{2, 2, 3, 4});
  }
}

TEST_CASE("Transformer (2 + 2 layers, final norms) matches PyTorch with every mask") {
  test::Reference ref("nn_transformer");
  const std::string c = "transformer";
  nn::Transformer model(8, 2, 2, 2, 16, 0.0);
  CHECK(names_of(model).size() == 2 * 12 + 2 + 2 * 18 + 2);
  load_weights(model, ref, c);
  Tensor src = ref.tensor(c, "src", true), tgt = ref.tensor(c, "tgt", true);
  Tensor out = model(src, tgt, std::nullopt, ref_mask(ref, c, "tgt_mask"), std::nullopt,
                     ref_mask(ref, c, "src_key_padding_mask"), ref_mask(ref, c, "tgt_key_padding_mask"),
                     ref_mask(ref, c, "memory_key_padding_mask"));
  check_against_reference(model, ref, c, out, {src, tgt}, {"src", "tgt"});
}

TEST_CASE("The paper's Transformer: 6 + 6 layers, d_model 512, 8 heads, ff 2048 = torch's 44,140,544 parameters") {
  attn::Generator gen(0);
  nn::Transformer model(512, 8, 6, 6, 2048, 0.1, nn::Activation::ReLU, 1e-5, false, gen);
  CHECK(model.num_parameters() == 44140544);
  auto names = names_of(model);
  CHECK(names.front() == "encoder.layers.0.self_attn.in_proj_weight");
  CHECK(std::count(names.begin(), names.end(), "decoder.layers.5.multihead_attn.out_proj.weight") == 1);
  CHECK(std::count(names.begin(), names.end(), "encoder.norm.weight") == 1);
  CHECK(names.back() == "decoder.norm.bias");
  // xavier_uniform_ on every matrix: linear1.weight [2048, 512] within sqrt(6 / 2560).
  const double bound = std::sqrt(6.0 / (512 + 2048));
  auto w = model.encoder.layers[3].linear1.weight.to_array();
  CHECK(xt::amax(xt::abs(w))() <= bound);
  CHECK(xt::amax(xt::abs(w))() > 0.99 * bound);
  // The redraw makes the layers differ (before it they were copies of one prototype).
  CHECK_FALSE(test::allclose(model.decoder.layers[0].linear2.weight, model.decoder.layers[1].linear2.weight, 0.0));
}

TEST_CASE("TransformerEncoder: every layer starts as a copy of the prototype, as PyTorch's deepcopy") {
  nn::TransformerEncoderLayer prototype(4, 2, 8, 0.0);
  nn::TransformerEncoder encoder(prototype, 3, /*norm=*/true);
  CHECK(names_of(encoder).size() == 3 * 12 + 2);
  CHECK(names_of(encoder).back() == "norm.bias");
  for (std::size_t i = 0; i < 3; ++i)
    CHECK(test::allclose(encoder.layers[i].linear1.weight, prototype.linear1.weight, 0.0));
  prototype.to(attn::Dtype::Float32);
  nn::TransformerEncoder encoder32(prototype, 2);
  CHECK(encoder32.dtype() == attn::Dtype::Float32);
  CHECK(encoder32.norm == nullptr);
  Tensor x = attn::randn({2, 3, 4}, attn::Dtype::Float32);
  CHECK(encoder32(x).dtype() == attn::Dtype::Float32);
}

TEST_CASE("Transformer layers pass gradcheck (d_model 4, 2 heads, ff 8, B 2, T 3, padding)") {
  attn::manual_seed(3);
  const Mask padding = nn::padding_mask(attn::Index({3, 2}), 3);
  const Mask memory_padding = nn::padding_mask(attn::Index({2, 3}), 3);
  for (bool norm_first : {false, true}) {
    INFO("norm_first " << norm_first);
    nn::TransformerEncoderLayer enc(4, 2, 8, 0.0, nn::Activation::GELU, 1e-5, norm_first);
    Tensor x = test::randn({2, 3, 4}, 11);
    CHECK_GRADCHECK([&](const Inputs& in) { return enc(in[0], nn::causal_mask(3), padding); },
                    with_parameters({x}, enc));

    nn::TransformerDecoderLayer dec(4, 2, 8, 0.0, nn::Activation::GELU, 1e-5, norm_first);
    Tensor tgt = test::randn({2, 3, 4}, 12), memory = test::randn({2, 3, 4}, 13);
    CHECK_GRADCHECK(
        [&](const Inputs& in) { return dec(in[0], in[1], nn::causal_mask(3), std::nullopt, padding, memory_padding); },
        with_parameters({tgt, memory}, dec));
  }
}

TEST_CASE("Causal mask: changing a later target position changes no earlier output") {
  attn::manual_seed(4);
  nn::Transformer model(8, 2, 1, 2, 16, 0.0);
  Tensor src = test::randn({2, 4, 8}, 21, false), tgt = test::randn({2, 5, 8}, 22, false);
  Mask causal = nn::Transformer::generate_square_subsequent_mask(5);
  auto before = model(src, tgt, std::nullopt, causal).to_array();
  xt::xarray<double> changed = tgt.to_array();
  xt::view(changed, xt::all(), 3, xt::all()) += 1.0;  // position 3 only
  auto after = model(src, Tensor(changed), std::nullopt, causal).to_array();
  CHECK(xt::allclose(xt::view(before, xt::all(), xt::range(0, 3)), xt::view(after, xt::all(), xt::range(0, 3)), 0.0,
                     0.0));
  CHECK_FALSE(xt::allclose(xt::view(before, xt::all(), 3), xt::view(after, xt::all(), 3)));
  // Without the mask, position 3 leaks into position 0.
  auto open = model(src, Tensor(changed)).to_array();
  auto open_before = model(src, tgt).to_array();
  CHECK_FALSE(xt::allclose(xt::view(open, xt::all(), 0), xt::view(open_before, xt::all(), 0)));
}

TEST_CASE("Transformer layers: bad shapes and settings throw with the expected shapes") {
  nn::TransformerEncoderLayer enc(8, 2, 16);
  CHECK_THROWS_WITH_SUBSTR(enc(attn::zeros({2, 3, 6})), attn::ShapeError, "expected src [B, T, 8], got [2, 3, 6]");
  CHECK_THROWS_WITH_SUBSTR(enc(attn::zeros({3, 8})), attn::ShapeError, "got [3, 8]");
  nn::TransformerDecoderLayer dec(8, 2, 16);
  CHECK_THROWS_WITH_SUBSTR(dec(attn::zeros({2, 3, 8}), attn::zeros({3, 4, 8})), attn::ShapeError,
                           "memory [3, 4, 8]");
  CHECK_THROWS_WITH_SUBSTR(nn::TransformerEncoderLayer(8, 3), attn::ValueError, "multiple of num_heads");
  CHECK_THROWS_WITH_SUBSTR(nn::TransformerDecoderLayer(8, 2, 0), attn::ValueError, "dim_feedforward");
  nn::Transformer model(8, 2, 1, 1, 16);
  CHECK_THROWS_WITH_SUBSTR(model(attn::zeros({2, 3, 8}), attn::zeros({1, 3, 8})), attn::ShapeError,
                           "got src [2, 3, 8] and tgt [1, 3, 8]");
  CHECK_THROWS_WITH_SUBSTR(enc(attn::zeros({2, 3, 8}), nn::causal_mask(4)), attn::ShapeError, "[3, 3]");
}

TEST_CASE("Transformer works in float32 and dropout acts only while training") {
  attn::manual_seed(5);
  nn::Transformer model(8, 2, 1, 1, 16, 0.5);
  model.to(attn::Dtype::Float32);
  Tensor src = attn::randn({2, 4, 8}, attn::Dtype::Float32), tgt = attn::randn({2, 3, 8}, attn::Dtype::Float32);
  model.eval();
  Tensor a = model(src, tgt), b = model(src, tgt);
  CHECK(a.dtype() == attn::Dtype::Float32);
  CHECK(test::allclose(a, b, 0.0));
  model.train();
  CHECK_FALSE(test::allclose(model(src, tgt), model(src, tgt), 1e-3));
}
