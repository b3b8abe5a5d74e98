// Wrong solutions of lab 22; labs/tests/test_lab22.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/22_conv_copy.hpp"

namespace lab {
namespace planted {
namespace conv_copy {

using attn::Index;
using attn::Tensor;
using lab::conv_copy::Attention;
using lab::conv_copy::Cell;
using lab::conv_copy::ConvCopy;
using lab::conv_copy::Kernels;
using lab::conv_copy::Step;

struct Options {
  // the attention
  bool softmax_unmasked = false, kappa_unmasked = false, valid = false, no_zeroing = false, matrix_norm = false,
       gate_over_padding = false, attention_detached = false, odd_zero_first = false, relu_conv2 = false,
       no_norm = false, fill_zero = false, off_by_one = false, l1_not_zeroed = false, gate_mean = false,
       reshaped = false;
  // the mixture
  bool swapped = false, log_space = false, first_only = false, unk = false, mixture_detached = false,
       log_output = false, renormalised = false;
  // the step
  bool gate_before_step = false, step_detached = false;
};

// A learner's attention with one mistake.
inline Attention attention(const Options& o, const Tensor& E, const std::vector<std::size_t>& lengths, const Tensor& h,
                           const Kernels& k) {
  const long B = long(E.size(0)), S = long(E.size(1)), T = long(h.size(1)), H = long(h.size(2));
  attn::Mask pad = xt::zeros<bool>({std::size_t(B), std::size_t(1), std::size_t(S)});
  for (long b = 0; b < B; ++b)
    // off_by_one: the mask true at j > lengths[b], position lengths[b] left in
    for (long j = long(lengths[b]) + (o.off_by_one ? 1 : 0); j < S; ++j) pad(b, 0, j) = true;
  auto zero = [&](const Tensor& t) { return o.no_zeroing ? t : attn::masked_fill(t, pad, 0.0); };
  // valid: "valid" convolutions, the w - 1 missing positions made up with zeros after the end
  auto conv = [&](const Tensor& x, const Tensor& w, const Tensor& b) {
    if (o.valid) return attn::conv1d(x, w, b, 0, w.size(2) - 1);
    // odd_zero_first: an even window's odd zero padded at the start (PyTorch's "same" puts it at the end)
    if (o.odd_zero_first) return attn::conv1d(x, w, b, w.size(2) / 2, (w.size(2) - 1) / 2);
    return attn::conv1d(x, w, b, "same");
  };
  const Tensor c1 = attn::relu(conv(zero(attn::transpose(E, 1, 2)), k.k1_w, k.k1_b));
  const Tensor l1 = o.l1_not_zeroed ? c1 : zero(c1);  // l1_not_zeroed: only E and conv2's output zeroed
  const Tensor c2 = conv(l1, k.k2_w, k.k2_b);
  const Tensor f = zero(o.relu_conv2 ? attn::relu(c2) : c2);
  const Tensor l2 = attn::unsqueeze(attn::transpose(f, 1, 2), 1) * attn::unsqueeze(h, 2);
  const std::vector<long> axes = o.matrix_norm ? std::vector<long>{-2, -1} : std::vector<long>{-1};
  const Tensor lfeat = o.no_norm ? l2 : l2 / attn::sqrt(attn::sum(l2 * l2, axes, true) + 1e-12);
  // reshaped: [B, T, S, H] reshaped to [B*T, H, S] without the transpose
  const Tensor rows = o.reshaped ? attn::reshape(lfeat, {B * T, H, S})
                                 : attn::transpose(attn::reshape(lfeat, {B * T, S, H}), 1, 2);
  auto score = [&](const Tensor& w, const Tensor& b) { return attn::reshape(conv(rows, w, b), {B, T, S}); };
  Attention out;
  Tensor sa = score(k.att_w, k.att_b), sc = score(k.copy_w, k.copy_b);
  const double fill = o.fill_zero ? 0.0 : -1e30;  // fill_zero: the padding's scores set to 0, not -1e30
  if (!o.softmax_unmasked) sa = attn::masked_fill(sa, pad, fill);
  if (!o.softmax_unmasked && !o.kappa_unmasked) sc = attn::masked_fill(sc, pad, fill);
  out.weights = attn::softmax(sa, -1);
  out.context = attn::matmul(out.weights, E);
  out.copy_weights = attn::softmax(sc, -1);
  Tensor gate = attn::sigmoid(score(k.gate_w, k.gate_b));
  if (!o.gate_over_padding) gate = attn::masked_fill(gate, pad, 0.0);
  out.copy_gate = o.gate_mean ? attn::sum(gate, {-1}, true) / double(S) : attn::max(gate, -1, true);
  if (o.attention_detached)
    for (Tensor* t : {&out.weights, &out.context, &out.copy_weights, &out.copy_gate}) *t = Tensor(t->data<double>());
  return out;
}

// A learner's mixture with one mistake.
inline Tensor mixture(const Options& o, const Tensor& p_gen, const Tensor& kappa, const Tensor& lambda,
                      const Index& copy_ids, std::size_t ext) {
  const std::size_t B = p_gen.size(0), T = p_gen.size(1), V = p_gen.size(2), S = kappa.size(2);
  Tensor gen = ext > V ? attn::concat({p_gen, attn::zeros({B, T, ext - V})}, -1) : p_gen;
  // Where each position's copy weight goes, [B, S, ext].
  xt::xarray<double> where = xt::zeros<double>({B, S, ext});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t j = 0; j < S; ++j) {
      std::size_t id = std::size_t(copy_ids(b, j));
      if (o.unk && id >= V) id = 3;  // source-only words as <unk>
      bool seen = false;             // first_only: a later occurrence of a word already copied is skipped
      for (std::size_t i = 0; i < j; ++i) seen = seen || copy_ids(b, i) == copy_ids(b, j);
      if (o.first_only && seen) continue;
      where(b, j, id) = 1.0;
    }
  const Tensor copied = attn::matmul(kappa, Tensor(where));
  const Tensor l = o.swapped ? 1.0 - lambda : lambda;
  Tensor p = o.log_space ? attn::exp(l * attn::log(gen + 1e-12) + (1.0 - l) * attn::log(copied + 1e-12))
                         : l * gen + (1.0 - l) * copied;
  if (o.renormalised) p = p / attn::sum(p, {-1}, true);  // the same values, another function
  if (o.log_output) p = attn::log(p + 1e-12);            // the chapter's model's output, not the mixture's
  return o.mixture_detached ? Tensor(p.data<double>()) : p;
}

inline Step step(const Options& o, const Tensor& E, const std::vector<std::size_t>& lengths, const Tensor& y_prev,
                 const Tensor& h_prev, const Cell& cell, const Kernels& k) {
  Tensor h = cell(y_prev, h_prev);
  if (o.step_detached) h = Tensor(h.data<double>());
  return {h, attention(o, E, lengths, attn::unsqueeze(o.gate_before_step ? h_prev : h, 1), k)};
}

inline std::vector<Planted<ConvCopy>> all() {
  auto with = [](Options o) {
    ConvCopy s;
    s.attention = [o](const Tensor& E, const std::vector<std::size_t>& l, const Tensor& h, const Kernels& k) {
      return attention(o, E, l, h, k);
    };
    s.mixture = [o](const Tensor& g, const Tensor& kap, const Tensor& lam, const Index& ids, std::size_t ext) {
      return mixture(o, g, kap, lam, ids, ext);
    };
    s.step = [o](const Tensor& E, const std::vector<std::size_t>& l, const Tensor& y, const Tensor& h, const Cell& c,
                 const Kernels& k) { return step(o, E, l, y, h, c, k); };
    return s;
  };
  std::vector<Planted<ConvCopy>> out;
  Options o;
  o.softmax_unmasked = true;
  out.push_back({"the padding not masked in the softmaxes", with(o), "the padding not masked in the softmaxes", true});
  o = {};
  o.kappa_unmasked = true;
  out.push_back({"copy weights over the padding (kappa's softmax not masked)", with(o),
                 "copy weights kappa spread over the padding", true});
  o = {};
  o.valid = true;
  out.push_back({"'valid' convolutions (positions shifted)", with(o), "'valid' convolutions", true});
  o = {};
  o.no_zeroing = true;
  out.push_back({"the padding not zeroed before each convolution", with(o), "not zeroed before each convolution", true});
  o = {};
  o.matrix_norm = true;
  out.push_back({"one norm for the whole matrix (the paper's)", with(o), "one norm for the whole [S, H] matrix", true});
  o = {};
  o.gate_over_padding = true;
  out.push_back({"the copy gate's max over the padding too", with(o), "the copy gate's max taken over the padding",
                 false});
  o = {};
  o.attention_detached = true;
  out.push_back({"the attention's outputs copied through arrays (no gradient)", with(o), "a (weights) does not require grad",
                 true});
  o = {};
  o.odd_zero_first = true;
  out.push_back({"an even window's odd zero padded at the start", with(o), "an even window's odd zero put at the start",
                 true});
  o = {};
  o.l1_not_zeroed = true;
  out.push_back({"L_1's padding not zeroed before conv2", with(o), "L_1's padding not zeroed before conv2", true});
  o = {};
  o.gate_mean = true;
  out.push_back({"lambda as the mean of the sigmoids, not their max", with(o), "lambda as the mean of the sigmoids",
                 true});
  o = {};
  o.reshaped = true;
  out.push_back({"the features reshaped to [B*T, H, S] without the transpose", with(o),
                 "reshaped straight to [B*T, H, S]", true});
  o = {};
  o.relu_conv2 = true;
  out.push_back({"a relu after the second convolution too", with(o), "a relu after the second convolution too", true});
  o = {};
  o.no_norm = true;
  out.push_back({"the gated features not normalised", with(o), "the gated features not normalised", true});
  o = {};
  o.fill_zero = true;
  out.push_back({"the padding's scores filled with 0, not -1e30", with(o), "a padded one", true});
  o = {};
  o.off_by_one = true;
  out.push_back({"the mask off by one (j > lengths[b])", with(o), "a padded one", true});
  o = {};
  o.swapped = true;
  out.push_back({"lambda and 1 - lambda swapped", with(o), "lambda and 1 - lambda swapped", true});
  o = {};
  o.log_space = true;
  out.push_back({"the mixture added in log space", with(o), "the mixture taken in log space", true});
  o = {};
  o.first_only = true;
  out.push_back({"a word held twice: only its first occurrence copied", with(o), "only its first occurrence", true});
  o = {};
  o.unk = true;
  out.push_back({"source-only words copied as <unk>", with(o), "source-only words copied as <unk>", true});
  o = {};
  o.log_output = true;
  out.push_back({"log(p + 1e-12) returned, as the chapter's model", with(o), "log(p + 1e-12) returned", true});
  o = {};
  o.renormalised = true;
  out.push_back({"p divided by its sum (the same values, another gradient)", with(o), "its gradient differs", true});
  o = {};
  o.mixture_detached = true;
  out.push_back({"the mixture copied through an array (no gradient)", with(o), "mixture(...) does not require grad",
                 true});
  o = {};
  o.gate_before_step = true;
  out.push_back({"the attention gated by h_{t-1}, before the step", with(o), "the state before the step", true});
  o = {};
  o.step_detached = true;
  out.push_back({"the step's h copied through an array (no gradient)", with(o), "step: gradient of", true});
  return out;
}

}  // namespace conv_copy
}  // namespace planted
}  // namespace lab
