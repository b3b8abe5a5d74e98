// The checks of lab11_encoder_layer.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab11_encoder_layer.hpp"

#include "labs/grader/grader.hpp"

#include <cmath>

namespace lab {
namespace encoder {

namespace hint {
inline const char* layer =
    "q, k, v = x in_proj_weight^T + in_proj_bias split in three [B, T, D]; split into H heads [B, H, T, D/H]; "
    "softmax(q k^T / sqrt(D/H)) with padded keys blocked before the softmax; merge heads, out_proj; then "
    "post-norm: x = norm1(x + attention), x = norm2(x + linear2(relu(linear1(x))))";
inline const char* equivariance =
    "without a mask, permuting the tokens must permute the outputs the same way: nothing in the layer may "
    "depend on a token's position";
}  // namespace hint

inline const std::vector<std::string>& names() {
  static const std::vector<std::string> n = {
      "in_proj_weight", "in_proj_bias", "out_proj_weight", "out_proj_bias", "linear1_weight", "linear1_bias",
      "linear2_weight", "linear2_bias", "norm1_weight",    "norm1_bias",    "norm2_weight",   "norm2_bias"};
  return n;
}

inline std::vector<Tensor*> fields(Params& p) {
  return {&p.in_proj_weight, &p.in_proj_bias, &p.out_proj_weight, &p.out_proj_bias, &p.linear1_weight,
          &p.linear1_bias,   &p.linear2_weight, &p.linear2_bias,  &p.norm1_weight,  &p.norm1_bias,
          &p.norm2_weight,   &p.norm2_bias};
}

enum class Variant { right, pre_norm, scale_by_model, no_mask, no_ff_residual, eps_1e6, eps_1e6_norm1, eps_1e6_norm2 };

// attn's own composition, and the usual mistakes.
inline Tensor reference(const Tensor& x, const attn::Mask& pad, const Params& p, Variant v = Variant::right) {
  std::size_t D = x.size(2), H = p.num_heads;
  auto norm = [&](const Tensor& t, const Tensor& w, const Tensor& b) {  // eps 1e-6 in one norm or both: a mistake
    bool small = v == Variant::eps_1e6 || (v == Variant::eps_1e6_norm1 && &w == &p.norm1_weight) ||
                 (v == Variant::eps_1e6_norm2 && &w == &p.norm2_weight);
    return attn::layer_norm(t, {D}, w, b, small ? 1e-6 : 1e-5);
  };
  auto attention = [&](const Tensor& t) {
    std::vector<Tensor> qkv = attn::chunk(attn::linear(t, p.in_proj_weight, p.in_proj_bias), 3, 2);  // [B, T, D] each
    Tensor q = attn::split_heads(qkv[0], H), k = attn::split_heads(qkv[1], H), vv = attn::split_heads(qkv[2], H);
    double scale = v == Variant::scale_by_model ? std::sqrt(double(D)) : std::sqrt(double(D) / double(H));
    Tensor scores = attn::matmul(q, attn::transpose(k, 2, 3)) / scale;  // [B, H, T, T]
    attn::Mask block = pad;
    block.reshape({pad.shape()[0], 1, 1, pad.shape()[1]});  // [B, 1, 1, T]: every head and query
    Tensor w = v == Variant::no_mask ? attn::softmax(scores, -1) : attn::nn::masked_softmax(scores, block, -1);
    return attn::linear(attn::merge_heads(attn::matmul(w, vv)), p.out_proj_weight, p.out_proj_bias);
  };
  auto ff = [&](const Tensor& t) {
    return attn::linear(attn::relu(attn::linear(t, p.linear1_weight, p.linear1_bias)), p.linear2_weight, p.linear2_bias);
  };
  if (v == Variant::pre_norm) {
    Tensor y = x + attention(norm(x, p.norm1_weight, p.norm1_bias));
    return y + ff(norm(y, p.norm2_weight, p.norm2_bias));
  }
  Tensor y = norm(x + attention(x), p.norm1_weight, p.norm1_bias);
  return norm(v == Variant::no_ff_residual ? ff(y) : y + ff(y), p.norm2_weight, p.norm2_bias);
}

inline std::string diagnose(const Tensor& x, const attn::Mask& pad, const Params& p, const Tensor& got) {
  const std::vector<std::pair<Variant, const char*>> mistakes = {
      {Variant::pre_norm, "pre-norm (the norm before each sublayer): PyTorch's default is post-norm"},
      {Variant::scale_by_model, "the scores divided by sqrt(D): divide by sqrt(D / H), a head's size"},
      {Variant::no_mask, "the padding mask is not applied"},
      {Variant::no_ff_residual, "no residual around the feed-forward: x + linear2(relu(linear1(x)))"},
      {Variant::eps_1e6, "the layer norms' eps 1e-6: nn.TransformerEncoderLayer's layer_norm_eps is 1e-5"},
      {Variant::eps_1e6_norm1, "norm1's eps 1e-6: nn.TransformerEncoderLayer's layer_norm_eps is 1e-5"},
      {Variant::eps_1e6_norm2, "norm2's eps 1e-6: nn.TransformerEncoderLayer's layer_norm_eps is 1e-5"}};
  attn::no_grad guard;
  for (const auto& [variant, what] : mistakes) {
    try {
      expect_close("out", reference(x, pad, p, variant).data<double>(), got, "", 1e-9, 1e-12);
      return std::string("; your values are what this mistake gives: ") + what;
    } catch (const Mismatch&) {
    }
  }
  return "";
}

Result grade(const EncoderLayer& m, std::ostream& os) {
  Grader grader(11, "a Transformer encoder layer", os);
  Reference ref("lab11_encoder_layer");
  auto load = [&](const std::string& c, bool requires_grad) {
    Params p;
    p.num_heads = 2;
    auto f = fields(p);
    for (std::size_t i = 0; i < f.size(); ++i) *f[i] = ref.tensor(c, names()[i], requires_grad);
    return p;
  };
  const std::string shapes = "x [2, 4, 8], 2 heads, feed-forward 16";
  auto fixed_values = [&](const std::string& c) {
    Params p = load(c, false);
    Tensor x = ref.tensor(c, "x");
    attn::Mask pad = xt::cast<bool>(ref.array(c, "mask"));
    Tensor out = m.layer(x, pad, p);
    try {
      expect_close("out", ref.array(c, "out"), out, shapes, 1e-8, 1e-10);
    } catch (const Mismatch& e) {
      throw Mismatch(e.what() + diagnose(x, pad, p, out));
    }
  };
  grader.check("values vs PyTorch's nn.TransformerEncoderLayer, no mask", hint::layer, [&] { fixed_values("no_mask"); });
  grader.check("values vs PyTorch, a key padding mask (lengths 4 and 2)", hint::layer, [&] { fixed_values("padding"); });
  grader.check("gradients of x and every parameter vs PyTorch, padding mask", hint::layer, [&] {
    Params p = load("padding", true);
    Tensor x = ref.tensor("padding", "x", true);
    Tensor out = m.layer(x, xt::cast<bool>(ref.array("padding", "mask")), p);
    if (!out.requires_grad()) throw Mismatch("the output does not require grad: compute it with attn's ops");
    attn::sum(out * ref.tensor("padding", "r")).backward();
    expect_close("the gradient of x", ref.array("padding", "grad_x"), x.grad(), shapes, 1e-7, 1e-9);
    auto f = fields(p);
    for (std::size_t i = 0; i < f.size(); ++i)
      expect_close("the gradient of " + names()[i], ref.array("padding", "grad_" + names()[i]), f[i]->grad(), shapes,
                   1e-7, 1e-9);
  });
  grader.check("permuting the tokens permutes the outputs (no mask)", hint::equivariance, [&] {
    Params p = load("no_mask", false);
    Tensor x = ref.tensor("no_mask", "x");
    attn::Mask none = xt::zeros<bool>({2, 4});
    attn::no_grad guard;
    Array out = array_of(m.layer(x, none, p), "out");
    std::vector<std::size_t> perm = {2, 0, 3, 1};
    Array xp = x.data<double>(), expected = out;
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t t = 0; t < 4; ++t)
        for (std::size_t d = 0; d < 8; ++d) xp(b, t, d) = x.data<double>()(b, perm[t], d), expected(b, t, d) = out(b, perm[t], d);
    expect_close("out of the permuted tokens", expected, m.layer(Tensor(xp), none, p), shapes + ", tokens in the order 2, 0, 3, 1",
                 1e-9, 1e-12);
  });
  grader.check("real scores near -2e12 (query bias +1e6, key bias -1e6), padded keys still ignored", hint::layer,
               [&] {
    // Every score is about -1e6 * 1e6 * 4 / sqrt(4) = -2e12 (a head has 4 features): a fill above it
    // (-1e4, -1e9) takes every weight.
    Params p = load("padding", false);
    Array bias = p.in_proj_bias.data<double>();
    for (std::size_t d = 0; d < 8; ++d) bias(d) += 1e6, bias(8 + d) -= 1e6;
    p.in_proj_bias = Tensor(bias);
    Tensor x = ref.tensor("padding", "x");
    attn::Mask pad = xt::cast<bool>(ref.array("padding", "mask"));
    attn::no_grad guard;
    Tensor out = m.layer(x, pad, p);
    try {
      expect_close("out", reference(x, pad, p).data<double>(), out, shapes + ", real scores near -2e12", 1e-8, 1e-10);
    } catch (const Mismatch& e) {
      // Named by what the values show: the padded tokens' x changes the real tokens' outputs here,
      // and does not with the fixed inputs' ordinary scores.
      auto leaks = [&](const Params& q) {
        Array xp = x.data<double>();
        for (std::size_t b = 0; b < 2; ++b)
          for (std::size_t t = 0; t < 4; ++t)
            if (pad(b, t))
              for (std::size_t d = 0; d < 8; ++d) xp(b, t, d) = 3.0;
        Array before = array_of(m.layer(x, pad, q), "out"), after = array_of(m.layer(Tensor(xp), pad, q), "out");
        for (std::size_t b = 0; b < 2; ++b)
          for (std::size_t t = 0; t < 4; ++t)
            for (std::size_t d = 0; d < 8; ++d)
              if (!pad(b, t) && std::abs(before(b, t, d) - after(b, t, d)) > 1e-9) return true;
        return false;
      };
      if (!leaks(p) || leaks(load("padding", false))) throw;
      throw Mismatch(e.what() + std::string("; the padded tokens' x changes the real tokens' outputs: the blocked "
                                            "scores outranked real scores near -2e12"),
                     blocked_fill_hint);
    }
  });
  grader.check("gradcheck on a small layer (x [1, 3, 4], 2 heads, padding), x and every parameter", hint::layer, [&] {
    Random rng(11000);
    Params p;
    p.num_heads = 2;
    std::vector<Shape> s = {{12, 4}, {12}, {4, 4}, {4}, {6, 4}, {6}, {4, 6}, {4}, {4}, {4}, {4}, {4}};
    std::vector<Tensor> inputs = {Tensor(rng.array({1, 3, 4}), true)};
    auto f = fields(p);
    for (std::size_t i = 0; i < f.size(); ++i) {
      bool gain = names()[i].find("norm") != std::string::npos && names()[i].find("weight") != std::string::npos;
      *f[i] = Tensor(Array(rng.array(s[i], -0.7, 0.7) + (gain ? 1.0 : 0.0)), true);  // norm gains near 1
      inputs.push_back(*f[i]);
    }
    attn::Mask pad = {{false, false, true}};
    std::vector<std::string> n = {"x"};
    n.insert(n.end(), names().begin(), names().end());
    expect_gradients("encoder layer", [&](const std::vector<Tensor>& in) {
      Params q = p;
      auto g = fields(q);
      for (std::size_t i = 0; i < g.size(); ++i) *g[i] = in[i + 1];
      return m.layer(in[0], pad, q);
    }, inputs, n);
  });
  return grader.finish();
}

}  // namespace encoder
}  // namespace lab
