// Wrong solutions of lab 11; labs/tests/test_lab11.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/11_encoder_layer.hpp"

#include <cmath>

namespace lab {
namespace planted {
namespace encoder {

using attn::Mask;
using attn::Tensor;
using lab::encoder::Params;
namespace good = lab::solutions::encoder;

struct Options {
  bool pre_norm = false, scale_by_model = false, no_mask = false, no_ff_residual = false;
  double fill = -1e30;  // what blocked scores are filled with
  double norm_eps = 1e-5, norm2_eps = 1e-5;
};

inline Tensor layer(const Options& o, const Tensor& x, const Mask& pad, const Params& p) {
  std::size_t B = x.size(0), T = x.size(1), D = x.size(2), H = p.num_heads;
  auto attention = [&](const Tensor& t) {
    std::vector<Tensor> qkv = attn::chunk(attn::linear(t, p.in_proj_weight, p.in_proj_bias), 3, 2);
    Tensor q = attn::split_heads(qkv[0], H), k = attn::split_heads(qkv[1], H), v = attn::split_heads(qkv[2], H);
    double scale = o.scale_by_model ? std::sqrt(double(D)) : std::sqrt(double(D) / double(H));
    Tensor scores = attn::matmul(q, attn::transpose(k, 2, 3)) / scale;
    Mask blocked = Mask::from_shape({B, 1, 1, T});
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t j = 0; j < T; ++j) blocked(b, 0, 0, j) = !o.no_mask && pad(b, j);
    Tensor w = attn::softmax(attn::masked_fill(scores, blocked, o.fill), -1);
    return attn::linear(attn::merge_heads(attn::matmul(w, v)), p.out_proj_weight, p.out_proj_bias);
  };
  auto norm = [&](const Tensor& t, const Tensor& w, const Tensor& b) {
    return attn::layer_norm(t, {D}, w, b, &w == &p.norm2_weight ? std::min(o.norm_eps, o.norm2_eps) : o.norm_eps);
  };
  auto ff = [&](const Tensor& t) {
    return attn::linear(attn::relu(attn::linear(t, p.linear1_weight, p.linear1_bias)), p.linear2_weight, p.linear2_bias);
  };
  if (o.pre_norm) {
    Tensor y = x + attention(norm(x, p.norm1_weight, p.norm1_bias));
    return y + ff(norm(y, p.norm2_weight, p.norm2_bias));
  }
  Tensor y = norm(x + attention(x), p.norm1_weight, p.norm1_bias);
  return norm(o.no_ff_residual ? ff(y) : y + ff(y), p.norm2_weight, p.norm2_bias);
}

inline std::vector<Planted<lab::encoder::EncoderLayer>> all() {
  auto make = [](Options o) {
    return lab::encoder::EncoderLayer{[o](const Tensor& x, const Mask& pad, const Params& p) { return layer(o, x, pad, p); }};
  };
  std::vector<Planted<lab::encoder::EncoderLayer>> out;
  Options o;
  o.pre_norm = true;
  out.push_back({"pre-norm instead of post-norm", make(o), "PyTorch's default is post-norm"});
  o = {};
  o.scale_by_model = true;
  out.push_back({"scores divided by sqrt(D), not sqrt(D / H)", make(o), "a head's size"});
  o = {};
  o.no_mask = true;
  out.push_back({"the padding mask ignored", make(o), "the padding mask is not applied"});
  o = {};
  o.no_ff_residual = true;
  out.push_back({"no residual around the feed-forward", make(o), "no residual around the feed-forward"});
  o = {};
  o.fill = -1e4;  // below every score of ordinary size, above a row of scores near -2e12
  out.push_back({"padded keys' scores filled with -1e4, not -1e30", make(o), "the blocked scores outranked real scores",
                 true});
  o = {};
  o.norm_eps = 1e-6;
  out.push_back({"the layer norms' eps 1e-6", make(o), "layer_norm_eps is 1e-5", true});
  o = {};
  o.norm2_eps = 1e-6;
  out.push_back({"the second layer norm's eps 1e-6", make(o), "norm2's eps 1e-6", true});
  for (double fill : {-1e5, -1e9}) {  // -1e9: the Annotated Transformer's, still above -2e12
    o = {};
    o.fill = fill;
    out.push_back({"padded keys' scores filled with " + num_str(fill) + ", not -1e30", make(o),
                   "any finite fill above them", true});
  }
  return out;
}

}  // namespace encoder
}  // namespace planted
}  // namespace lab
