// The checks of lab22_conv_copy.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab22_conv_copy.hpp"

#include "labs/grader/grader.hpp"
#include "nn/attention/convolutional.hpp"
#include "nn/rnn_cell.hpp"

#include <cmath>

namespace lab {
namespace conv_copy {

namespace hint {
inline const char* attention =
    "E -> transpose to [B, D, S] -> conv1d(K_1, \"same\") -> relu -> conv1d(K_2, \"same\"), the padding zeroed "
    "before each convolution; gate by h ([B, 1, S, H] * [B, T, 1, H]), each position's row divided by "
    "sqrt(sum of squares + 1e-12); scores conv1d(\"same\") over the positions; a and kappa softmaxes over the real "
    "positions (padding -1e30); lambda the max over the real positions of sigmoid(the gate's score)";
inline const char* shapes =
    "B is E.size(0), S E.size(1), D E.size(2), T h.size(1), H h.size(2); every convolution keeps the S positions "
    "(\"same\"), so a, kappa [B, T, S], n [B, T, D], lambda [B, T, 1]";
inline const char* gradients =
    "build every output from E, h and the kernels with attn's ops (conv1d, relu, masked_fill, mul, sqrt, softmax, "
    "sigmoid, max, matmul), nothing copied through an array: autograd then finds the backward";
inline const char* gradient_differs =
    "your values are right here but your function is not the README's: its gradient differs (an extra step that "
    "changes nothing on these inputs, such as dividing p by its sum, a clamp, or a part detached or copied through "
    "an array); build exactly the README's formula from attn's ops";
inline const char* wrong_values =
    "the gradient of a wrong function is wrong too: the checks of its values name the mistake; fix those first";
inline const char* mixture =
    "p(y) = lambda p_gen(y) + (1 - lambda) sum_{j: copy_ids_j = y} kappa_j: p_gen widened with zeros to the "
    "extended vocabulary (the source-only ids V.. get no generation mass), every position's kappa added to its "
    "word's id (attn::matmul(kappa, attn::one_hot(copy_ids, ext))), the two mixed as probabilities";
inline const char* sums_to_one =
    "lambda * 1 + (1 - lambda) * 1: p_gen and kappa each sum to 1, and each position's weight lands on exactly one "
    "id, so every row of p sums to 1";
inline const char* head =
    "kappa is 0 on the padding (its softmax blocks it), so the padding's id <pad> gets no copy mass; your "
    "attention and your mixture together must give PyTorch's p";
inline const char* step =
    "h_t = cell(y_prev, h_prev) first, then the attention gated by that h_t ([B, 1, H]: attn::unsqueeze(h, 1)); "
    "chapter 12 gates with the state after reading y_{t-1}";
}  // namespace hint

const char* kernel_names[] = {"k1_w", "k1_b", "k2_w", "k2_b", "att_w", "att_b", "copy_w", "copy_b", "gate_w", "gate_b"};

std::vector<Tensor*> fields(Kernels& k) {
  return {&k.k1_w, &k.k1_b, &k.k2_w, &k.k2_b, &k.att_w, &k.att_b, &k.copy_w, &k.copy_b, &k.gate_w, &k.gate_b};
}

Kernels kernels_of(const Reference& ref, const std::string& c, bool requires_grad = false) {
  Kernels k;
  auto f = fields(k);
  for (std::size_t i = 0; i < f.size(); ++i) *f[i] = ref.tensor(c, kernel_names[i], requires_grad);
  return k;
}

// ---- the attention, right and with the usual mistakes, from attn's ops ----

enum class A {
  right, both_unmasked, a_unmasked, kappa_unmasked, shifted, odd_zero_first, no_zeroing, e_not_zeroed,
  l1_not_zeroed, f_not_zeroed, relu_conv2, no_norm, matrix_norm, norm_over_positions, reshaped, gate_padding, gate_mean
};

inline Attention attention_of(const Tensor& E, const std::vector<std::size_t>& lengths, const Tensor& h,
                              const Kernels& k, A v) {
  const long B = long(E.size(0)), S = long(E.size(1)), T = long(h.size(1)), H = long(h.size(2));
  attn::Mask pad = xt::zeros<bool>({std::size_t(B), std::size_t(1), std::size_t(S)});
  for (long b = 0; b < B; ++b)
    for (long j = long(lengths[b]); j < S; ++j) pad(b, 0, j) = true;
  // zero(t, skip): the padding of t zeroed, unless this mistake skips it (there, or everywhere)
  auto zero = [&](const Tensor& t, A skip) {
    return v == A::no_zeroing || v == skip ? t : attn::masked_fill(t, pad, 0.0);
  };
  auto conv = [&](const Tensor& x, const Tensor& w, const Tensor& b) {  // shifted: "valid", zeros after the end
    if (v == A::shifted) return attn::conv1d(x, w, b, 0, w.size(2) - 1);
    if (v == A::odd_zero_first) return attn::conv1d(x, w, b, w.size(2) / 2, (w.size(2) - 1) / 2);
    return attn::conv1d(x, w, b, "same");
  };
  const Tensor l1 = zero(attn::relu(conv(zero(attn::transpose(E, 1, 2), A::e_not_zeroed), k.k1_w, k.k1_b)),
                         A::l1_not_zeroed);
  const Tensor c2 = conv(l1, k.k2_w, k.k2_b);
  const Tensor f = zero(v == A::relu_conv2 ? attn::relu(c2) : c2, A::f_not_zeroed);
  const Tensor l2 = attn::unsqueeze(attn::transpose(f, 1, 2), 1) * attn::unsqueeze(h, 2);
  const std::vector<long> axes = v == A::matrix_norm           ? std::vector<long>{-2, -1}
                                 : v == A::norm_over_positions ? std::vector<long>{-2}
                                                               : std::vector<long>{-1};
  const Tensor lfeat = v == A::no_norm ? l2 : l2 / attn::sqrt(attn::sum(l2 * l2, axes, true) + 1e-12);
  const Tensor rows = v == A::reshaped ? attn::reshape(lfeat, {B * T, H, S})
                                       : attn::transpose(attn::reshape(lfeat, {B * T, S, H}), 1, 2);
  auto score = [&](const Tensor& w, const Tensor& b) { return attn::reshape(conv(rows, w, b), {B, T, S}); };
  auto weights = [&](const Tensor& s, bool masked) {
    return attn::softmax(masked ? attn::masked_fill(s, pad, -1e30) : s, -1);
  };
  Attention out;
  out.weights = weights(score(k.att_w, k.att_b), v != A::both_unmasked && v != A::a_unmasked);
  out.context = attn::matmul(out.weights, E);
  out.copy_weights = weights(score(k.copy_w, k.copy_b), v != A::both_unmasked && v != A::kappa_unmasked);
  Tensor gate = attn::sigmoid(score(k.gate_w, k.gate_b));
  if (v != A::gate_padding) gate = attn::masked_fill(gate, pad, 0.0);
  out.copy_gate = v == A::gate_mean ? attn::sum(gate, {-1}, true) / double(S) : attn::max(gate, -1, true);
  return out;
}

const char* output_names[] = {"a (weights)", "n (context)", "kappa (copy_weights)", "lambda (copy_gate)"};

std::vector<Tensor> outputs_of(const Attention& a) { return {a.weights, a.context, a.copy_weights, a.copy_gate}; }

// The learner's four outputs against four expected arrays, each named on a mismatch.
void expect_attention(const std::vector<Array>& expected, const Attention& got, const std::string& inputs,
                      double rtol = 1e-9, double atol = 1e-11) {
  std::vector<Tensor> g = outputs_of(got);
  for (std::size_t i = 0; i < 4; ++i) {
    const Array e = expected[i];
    Array r = array_of(g[i], output_names[i]);
    if (i != 1 && r.dimension() == 3 && e.dimension() == 3 && r.shape()[2] < e.shape()[2] && i != 3)
      throw Mismatch(std::string(output_names[i]) + " has " + std::to_string(r.shape()[2]) + " positions for a source "
                         "of " + std::to_string(e.shape()[2]) + " (inputs: " + inputs + "): 'valid' convolutions drop "
                         "w - 1 positions of each window; chapter 12's are \"same\", every position keeps its score",
                     hint::attention);
    expect_close(output_names[i], e, r, inputs, rtol, atol);
  }
}

std::vector<Array> arrays_of(const Attention& a) {
  std::vector<Array> out;
  for (const Tensor& t : outputs_of(a)) out.push_back(t.data<double>());
  return out;
}

// When no listed mistake matches: a or kappa with weight on a padded position says so.
inline std::string padding_weight(const std::vector<std::size_t>& lengths, const Attention& got) {
  const std::pair<const Tensor*, const char*> outs[] = {{&got.weights, "a"}, {&got.copy_weights, "kappa"}};
  for (const auto& [t, name] : outs) {
    if (!t->defined() || t->dim() != 3 || t->size(0) != lengths.size()) continue;
    const Array w = t->data<double>();
    for (std::size_t b = 0; b < w.shape()[0]; ++b)
      for (std::size_t j = lengths[b]; j < w.shape()[2]; ++j)
        for (std::size_t i = 0; i < w.shape()[1]; ++i)
          if (std::abs(w(b, i, j)) > 1e-9)
            return std::string("; your ") + name + " puts weight on position " + std::to_string(j) + " of row " +
                   std::to_string(b) + ", a padded one (lengths[b] = " + std::to_string(lengths[b]) +
                   ": the real positions are 0 .. lengths[b]-1): fill the scores of every j >= lengths[b] with -1e30 "
                   "(not 0) before the softmax, so it gets exactly 0";
  }
  return "";
}

inline std::string diagnose_attention(const Tensor& E, const std::vector<std::size_t>& lengths, const Tensor& h,
                                      const Kernels& k, const Attention& got) {
  const std::vector<std::pair<A, const char*>> mistakes = {
      {A::both_unmasked,
       "the padding not masked in the softmaxes (a and kappa): the positions j >= lengths[b] take weight; fill their "
       "scores with -1e30 before each softmax"},
      {A::a_unmasked,
       "the padding not masked in the attention's softmax (a): fill the scores of j >= lengths[b] with -1e30 first"},
      {A::kappa_unmasked,
       "the copy weights kappa spread over the padding (the copy softmax not masked): the mixture then sums them into "
       "the padding's id <pad>; fill the copy scores of j >= lengths[b] with -1e30 first"},
      {A::shifted,
       "'valid' convolutions with the zeros put after the end: the positions shift by (w - 1) / 2; chapter 12's are "
       "\"same\" (attn::conv1d(x, w, b, \"same\")), position j's window centred on j"},
      {A::odd_zero_first,
       "an even window's odd zero put at the start: \"same\" (PyTorch's, attn::conv1d(x, w, b, \"same\")) puts "
       "(w - 1) / 2 zeros before and w / 2 after, so the odd one goes at the end"},
      {A::no_zeroing,
       "the padding not zeroed before each convolution: conv1's bias makes L_1 non-zero there and the next windows at "
       "a row's last real positions read it (a row's result then depends on its batch); masked_fill the padding with "
       "0 before conv1, conv2 and the score convolutions"},
      {A::e_not_zeroed,
       "E's padding not zeroed before conv1: the padded rows of E hold values, and conv1's windows at a row's last "
       "real positions read them; masked_fill the transposed E's padding with 0 first"},
      {A::l1_not_zeroed,
       "L_1's padding not zeroed before conv2: conv1's bias (through the relu) makes it non-zero, and conv2's windows "
       "at a row's last real positions read it; masked_fill L_1's padding with 0"},
      {A::f_not_zeroed,
       "conv2's output not zeroed on the padding: its bias makes it non-zero there, and the score convolutions' "
       "windows at a row's last real positions read it; masked_fill it with 0 before the gating"},
      {A::relu_conv2,
       "a relu after the second convolution too: only L_1 = relu(conv1d(E, K_1)) has one; L_2 = conv1d(L_1, K_2) "
       "gated by h_t, with no relu"},
      {A::no_norm,
       "the gated features not normalised: divide each position's row of L_2 by sqrt(sum over H of its squares + "
       "1e-12) before the score convolutions"},
      {A::norm_over_positions,
       "the norm summed over the positions (axis S) instead of over H: each position's row is divided by its own "
       "norm, attn::sum(l2 * l2, {-1}, true)"},
      {A::reshaped,
       "[B, T, S, H] reshaped straight to [B*T, H, S]: a reshape keeps the memory order and mixes positions with "
       "channels; reshape to [B*T, S, H], then attn::transpose(x, 1, 2)"},
      {A::matrix_norm,
       "one norm for the whole [S, H] matrix (the paper's): chapter 12 normalises each position's row, "
       "sum over the last axis only"},
      {A::gate_padding,
       "the copy gate's max taken over the padding too: set the padding's sigmoids to 0 before the max"},
      {A::gate_mean,
       "lambda as the mean of the sigmoids: it is their max over the real positions, attn::max(x, -1, true)"}};
  for (const auto& [v, what] : mistakes) {
    try {
      attn::no_grad guard;
      expect_attention(arrays_of(attention_of(E, lengths, h, k, v)), got, "", 1e-9, 1e-11);
      return std::string("; your values are what this mistake gives: ") + what;
    } catch (const std::exception&) {
    }
  }
  return padding_weight(lengths, got);
}

// ---- the mixture, right and with the usual mistakes, on arrays ----

enum class M { right, swapped, log_space, log_space_eps, first_only, unk, copy_unweighted, log_output };

inline Array mixture_of(const Array& p_gen, const Array& kappa, const Array& lambda, const Index& ids,
                        std::size_t ext, M v) {
  const std::size_t B = p_gen.shape()[0], T = p_gen.shape()[1], V = p_gen.shape()[2], S = kappa.shape()[2];
  Array p = xt::zeros<double>({B, T, ext});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t) {
      Array gen = xt::zeros<double>({ext}), copied = xt::zeros<double>({ext});
      for (std::size_t y = 0; y < V; ++y) gen(y) = p_gen(b, t, y);
      for (std::size_t j = 0; j < S; ++j) {
        std::size_t id = std::size_t(ids(b, j));
        if (v == M::unk && id >= V) id = 3;
        bool earlier = false;
        for (std::size_t i = 0; i < j; ++i) earlier = earlier || ids(b, i) == ids(b, j);
        if (v == M::first_only && earlier) continue;
        copied(id) += kappa(b, t, j);
      }
      const double l = v == M::swapped ? 1.0 - lambda(b, t, 0) : lambda(b, t, 0);
      for (std::size_t y = 0; y < ext; ++y) {
        if (v == M::log_space || v == M::log_space_eps) {
          const double eps = v == M::log_space_eps ? 1e-12 : 0.0;
          p(b, t, y) = std::exp(l * std::log(gen(y) + eps) + (1.0 - l) * std::log(copied(y) + eps));
        } else if (v == M::log_output) {
          p(b, t, y) = std::log(l * gen(y) + (1.0 - l) * copied(y) + 1e-12);
        } else {
          p(b, t, y) = l * gen(y) + (v == M::copy_unweighted ? 1.0 : 1.0 - l) * copied(y);
        }
      }
    }
  return p;
}

inline std::string diagnose_mixture(const Array& p_gen, const Array& kappa, const Array& lambda, const Index& ids,
                                    std::size_t ext, const Array& got) {
  const std::vector<std::pair<M, const char*>> mistakes = {
      {M::swapped,
       "lambda and 1 - lambda swapped: lambda_t is the probability of generating (it weights p_gen), 1 - lambda_t "
       "weights the copies"},
      {M::log_space,
       "the mixture taken in log space (lambda log p_gen + (1 - lambda) log copy, then exp): a mixture adds "
       "probabilities, lambda p_gen + (1 - lambda) copy"},
      {M::log_space_eps,
       "the mixture taken in log space (lambda log p_gen + (1 - lambda) log copy, then exp): a mixture adds "
       "probabilities, lambda p_gen + (1 - lambda) copy"},
      {M::first_only,
       "a word the source holds twice gets only its first occurrence's copy weight: add every position's kappa to "
       "its word (a product with one_hot(copy_ids) does)"},
      {M::unk,
       "source-only words copied as <unk> (id 3): they get their extended ids V.., as copy_ids gives them, where "
       "p_gen is 0"},
      {M::copy_unweighted,
       "the copies not weighted by 1 - lambda: p = lambda p_gen + (1 - lambda) copy"},
      {M::log_output,
       "log(p + 1e-12) returned, as the chapter's model does: mixture returns the probabilities p themselves"}};
  for (const auto& [v, what] : mistakes) {
    try {
      expect_close("", mixture_of(p_gen, kappa, lambda, ids, ext, v), got, "", 1e-9, 1e-12);
      return std::string("; your values are what this mistake gives: ") + what;
    } catch (const Mismatch&) {
    }
  }
  return "";
}

// ---- random inputs ----

struct AttentionInputs {
  Array E, h;
  std::vector<std::size_t> lengths;
  std::vector<Array> k;  // the ten kernel tensors, in kernel_names' order
  std::string describe() const {
    std::string l;
    for (std::size_t n : lengths) l += (l.empty() ? "" : ", ") + std::to_string(n);
    return "E " + shape_str(Shape(E.shape().begin(), E.shape().end())) + ", h " +
           shape_str(Shape(h.shape().begin(), h.shape().end())) + ", lengths [" + l + "], windows " +
           std::to_string(k[0].shape()[2]) + ", " + std::to_string(k[2].shape()[2]) + ", " +
           std::to_string(k[4].shape()[2]) + ", k1 " + std::to_string(k[0].shape()[0]);
  }
  Kernels kernels(bool requires_grad = false) const {
    Kernels out;
    auto f = fields(out);
    for (std::size_t i = 0; i < f.size(); ++i) *f[i] = Tensor(k[i], requires_grad);
    return out;
  }
};

// B 1..3, S 1..7, T 1..3, D, H, k1 1..4, windows 1..4 (even ones pad their odd zero at the end), a padded row.
inline AttentionInputs random_attention(Random& rng, std::size_t max_s = 7) {
  AttentionInputs in;
  const std::size_t B = rng.integer(1, 3), S = rng.integer(1, max_s), T = rng.integer(1, 3), D = rng.integer(1, 4),
                    H = rng.integer(1, 4), k1 = rng.integer(1, 4);
  const std::size_t w1 = rng.integer(1, 4), w2 = rng.integer(1, 4), w3 = rng.integer(1, 4);
  in.E = rng.array({B, S, D}, -1.5, 1.5);
  in.h = rng.away_from_zero({B, T, H}, 0.3, 1.5);
  for (std::size_t b = 0; b < B; ++b) in.lengths.push_back(b == 0 ? S : rng.integer(1, S));
  if (B == 1 && S > 1) in.lengths[0] = rng.integer(1, S);
  const std::vector<Shape> shapes = {{k1, D, w1}, {k1}, {H, k1, w2}, {H}, {1, H, w3}, {1}, {1, H, w3}, {1},
                                     {1, H, w3},  {1}};
  for (const Shape& s : shapes) in.k.push_back(rng.array(s, -0.8, 0.8));
  return in;
}

// The library's layer with these kernels: features() and forward() with the padding mask.
inline Attention library_attention(const AttentionInputs& in) {
  attn::no_grad guard;
  const std::size_t B = in.E.shape()[0], S = in.E.shape()[1], D = in.E.shape()[2], H = in.h.shape()[2];
  attn::nn::ConvolutionalAttention layer(D, H, in.k[0].shape()[0], in.k[0].shape()[2], in.k[2].shape()[2],
                                         in.k[4].shape()[2], /*copy=*/true);
  Tensor* params[] = {&layer.conv1.weight,     &layer.conv1.bias,         &layer.conv2.weight,
                      &layer.conv2.bias,       &layer.attention.weight,   &layer.attention.bias,
                      &layer.copy_conv.weight, &layer.copy_conv.bias,     &layer.copy_gate_conv.weight,
                      &layer.copy_gate_conv.bias};
  for (std::size_t i = 0; i < 10; ++i) *params[i] = Tensor(in.k[i]);
  attn::Mask mask = xt::zeros<bool>({B, S});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t j = in.lengths[b]; j < S; ++j) mask(b, j) = true;
  const Tensor E(in.E);
  auto out = layer(E, layer.features(E, mask), Tensor(in.h), mask);
  return {out.weights, out.context, out.copy_weights, out.copy_gate};
}

struct MixtureInputs {
  Array p_gen, kappa, lambda;
  Index ids;
  std::size_t ext = 0;
  std::string describe() const {
    return "p_gen " + shape_str(Shape(p_gen.shape().begin(), p_gen.shape().end())) + ", kappa " +
           shape_str(Shape(kappa.shape().begin(), kappa.shape().end())) + ", extended_vocab " + std::to_string(ext);
  }
};

// B 1..3, T 1..3, V 4..8, S 1..6, ext V..V+3; kappa a softmax over each row's real positions (0 on the
// padding, whose id is <pad> = 0); words drawn from the last 3 vocabulary ids and the source-only ones.
inline MixtureInputs random_mixture(Random& rng) {
  MixtureInputs in;
  const std::size_t B = rng.integer(1, 3), T = rng.integer(1, 3), V = rng.integer(4, 8), S = rng.integer(1, 6);
  in.ext = V + rng.integer(0, 3);
  in.p_gen = xt::exp(rng.array({B, T, V}, -2.0, 2.0));
  in.p_gen /= xt::eval(xt::sum(in.p_gen, {2}, xt::keep_dims));
  in.kappa = xt::exp(rng.array({B, T, S}, -2.0, 2.0));
  in.lambda = rng.array({B, T, 1}, 0.05, 0.95);
  in.ids = Index::from_shape({B, S});
  for (std::size_t b = 0; b < B; ++b) {
    const std::size_t n = rng.integer(1, S);
    for (std::size_t j = 0; j < S; ++j) {
      in.ids(b, j) = j < n ? std::int64_t(rng.integer(V - 3, in.ext - 1)) : 0;
      if (j >= n)
        for (std::size_t t = 0; t < T; ++t) in.kappa(b, t, j) = 0.0;
    }
  }
  if (in.ext > V) in.ids(0, 0) = std::int64_t(V);
  in.kappa /= xt::eval(xt::sum(in.kappa, {2}, xt::keep_dims));
  return in;
}

Result grade(const ConvCopy& m, std::ostream& os) {
  Grader grader(22, "convolutional attention and its copy head", os);
  Reference ref("lab22_conv_copy");
  const Tensor E0 = ref.tensor("attention", "E"), h0 = ref.tensor("attention", "h");
  const std::vector<std::size_t> lengths0 = lengths_of(ref.array("attention", "lengths"));
  const Kernels K0 = kernels_of(ref, "attention");
  const std::string fixed_inputs = "E [2, 6, 4], h [2, 2, 3], lengths [6, 4], k1 5, windows 5, 3, 3";
  auto expected0 = [&] {
    return std::vector<Array>{ref.array("attention", "a"), ref.array("attention", "n"),
                              ref.array("attention", "kappa"), ref.array("attention", "lambda")};
  };
  auto call_attention = [&](const Tensor& E, const std::vector<std::size_t>& l, const Tensor& h, const Kernels& k) {
    attn::no_grad guard;
    return m.attention(E, l, h, k);
  };
  auto attention_right_at_fixed = [&] {
    try {
      expect_attention(expected0(), call_attention(E0, lengths0, h0, K0), fixed_inputs);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  };

  grader.check("attention vs PyTorch (a, n, kappa, lambda; " + fixed_inputs + ")", hint::attention, [&] {
    Attention got = call_attention(E0, lengths0, h0, K0);
    try {
      expect_attention(expected0(), got, fixed_inputs);
    } catch (const Mismatch& e) {
      throw Mismatch(e.what() + diagnose_attention(E0, lengths0, h0, K0, got), e.hint);
    }
  });

  grader.check("attention vs nn::ConvolutionalAttention (random B, S, T, D, H, k1, windows 1 to 4, lengths)",
               hint::shapes, [&] {
                 Random rng(22100);
                 for (int trial = 0; trial < 16; ++trial) {
                   AttentionInputs in = random_attention(rng);
                   const Tensor E(in.E), h(in.h);
                   const Kernels k = in.kernels();
                   Attention got = call_attention(E, in.lengths, h, k);
                   try {
                     expect_attention(arrays_of(library_attention(in)), got, in.describe());
                   } catch (const Mismatch& e) {
                     std::string named = diagnose_attention(E, in.lengths, h, k, got);
                     throw Mismatch(e.what() + named, named.empty() ? (e.hint.empty() ? hint::shapes : e.hint)
                                                                    : hint::attention);
                   }
                 }
               });

  grader.check("attention: gradients of E, h and the ten kernel tensors vs PyTorch (of the sum of each output "
               "times a fixed r)",
               hint::gradients, [&] {
                 Tensor E(ref.array("attention", "E"), true), h(ref.array("attention", "h"), true);
                 Kernels k = kernels_of(ref, "attention", true);
                 Attention got = m.attention(E, lengths0, h, k);
                 std::vector<Tensor> outs = outputs_of(got);
                 const char* r_names[] = {"r_a", "r_n", "r_kappa", "r_lambda"};
                 Tensor loss;
                 for (std::size_t i = 0; i < 4; ++i) {
                   if (!outs[i].defined())
                     throw Mismatch(std::string(output_names[i]) + ": received an undefined tensor");
                   if (!outs[i].requires_grad())
                     throw Mismatch(std::string(output_names[i]) + " does not require grad: it was not built from E, "
                                    "h and the kernels with attn's ops");
                   Tensor term = attn::sum(outs[i] * ref.tensor("attention", r_names[i]));
                   loss = loss.defined() ? loss + term : term;
                 }
                 loss.backward();
                 std::vector<std::pair<std::string, Tensor>> inputs = {{"E", E}, {"h", h}};
                 auto f = fields(k);
                 for (std::size_t i = 0; i < f.size(); ++i) inputs.push_back({kernel_names[i], *f[i]});
                 for (const auto& [name, t] : inputs) {
                   try {
                     // the biases of K_att and K_copy are dead (a softmax ignores a constant): their gradient is 0,
                     // and undefined when no op reached them
                     if ((name == "att_b" || name == "copy_b") && !t.grad().defined()) continue;
                     expect_grad_defined(t, name, hint::gradients);
                     expect_close("the gradient of " + name, ref.array("attention", "grad_" + name), t.grad(),
                                  fixed_inputs, 1e-7, 1e-10);
                   } catch (const Mismatch& e) {
                     if (!attention_right_at_fixed())
                       throw Mismatch(e.what() + std::string("; the values are wrong too"), hint::wrong_values);
                     if (t.grad().defined()) throw Mismatch(e.what(), hint::gradient_differs);
                     throw;
                   }
                 }
               });

  grader.check("attention: gradcheck of E, h and the kernels (random shapes, padding)", hint::gradients, [&] {
    Random rng(22300);
    for (int trial = 0; trial < 3; ++trial) {
      AttentionInputs in = random_attention(rng, 5);
      std::vector<Tensor> a = {Tensor(in.E, true), Tensor(in.h, true)};
      for (const Array& k : in.k) a.push_back(Tensor(k, true));
      std::vector<std::string> names = {"E", "h"};
      for (const char* n : kernel_names) names.push_back(n);
      {  // gradcheck evaluates without recording: whether the outputs record a graph is asked here
        Kernels k = in.kernels(true);
        std::vector<Tensor> outs = outputs_of(m.attention(a[0], in.lengths, a[1], k));
        for (std::size_t i = 0; i < 4; ++i)
          if (!outs[i].defined() || !outs[i].requires_grad())
            throw Mismatch(std::string(output_names[i]) + " does not require grad: it was not built from E, h and "
                           "the kernels with attn's ops");
      }
      auto run = [&](const std::vector<Tensor>& x) {
        Kernels k;
        auto f = fields(k);
        for (std::size_t i = 0; i < f.size(); ++i) *f[i] = x[i + 2];
        Attention o = m.attention(x[0], in.lengths, x[1], k);
        const long B = long(o.weights.size(0)), T = long(o.weights.size(1));
        return attn::concat({o.weights, o.context, o.copy_weights, attn::reshape(o.copy_gate, {B, T, 1})}, -1);
      };
      expect_gradients("attention", run, a, names);
    }
  });

  const MixtureInputs mix0{ref.array("mixture", "p_gen"), ref.array("mixture", "kappa"),
                           ref.array("mixture", "lambda"), ids_of(ref.array("mixture", "copy_ids")), 9};
  auto call_mixture = [&](const MixtureInputs& in) {
    attn::no_grad guard;
    return m.mixture(Tensor(in.p_gen), Tensor(in.kappa), Tensor(in.lambda), in.ids, in.ext);
  };
  auto mixture_named = [&](const MixtureInputs& in, const Array& got) {
    return diagnose_mixture(in.p_gen, in.kappa, in.lambda, in.ids, in.ext, got);
  };
  // A mistake named on random inputs only when the fixed inputs show the same one.
  auto confirm = [&](const std::string& named) -> std::string {
    if (named.empty()) return named;
    try {
      return mixture_named(mix0, array_of(call_mixture(mix0), "p")) == named ? named : "";
    } catch (const std::exception&) {
      return "";
    }
  };

  grader.check("mixture vs PyTorch (p_gen [2, 2, 6], kappa [2, 2, 5], extended_vocab 9: a word held twice, "
               "source-only words, one held twice, a padded row)",
               hint::mixture, [&] {
                 Tensor got = call_mixture(mix0);
                 try {
                   expect_close("p", ref.array("mixture", "p"), got, mix0.describe(), 1e-10, 1e-12);
                 } catch (const Mismatch& e) {
                   throw Mismatch(e.what() + mixture_named(mix0, array_of(got, "p")));
                 }
               });

  grader.check("mixture vs nn::copy_mixture, every row summing to 1 (random B, T, V, S, extended_vocab)",
               hint::sums_to_one, [&] {
                 Random rng(22500);
                 for (int trial = 0; trial < 16; ++trial) {
                   MixtureInputs in = random_mixture(rng);
                   Tensor expected;
                   {
                     attn::no_grad guard;
                     expected = attn::nn::copy_mixture(Tensor(in.p_gen), Tensor(in.kappa), Tensor(in.lambda), in.ids,
                                                       in.ext);
                   }
                   Array got = array_of(call_mixture(in), "p");
                   try {
                     expect_close("p", expected.data<double>(), got, in.describe(), 1e-10, 1e-12);
                   } catch (const Mismatch& e) {
                     std::string named = confirm(mixture_named(in, got));
                     throw Mismatch(e.what() + named, named.empty() ? hint::sums_to_one : hint::mixture);
                   }
                 }
               });

  grader.check("mixture: gradients of p_gen, kappa and lambda vs PyTorch, and a gradcheck", hint::gradients, [&] {
    std::vector<Tensor> a = {Tensor(mix0.p_gen, true), Tensor(mix0.kappa, true), Tensor(mix0.lambda, true)};
    const char* names[] = {"p_gen", "kappa", "lambda"};
    Tensor p = m.mixture(a[0], a[1], a[2], mix0.ids, mix0.ext);
    if (!p.requires_grad())
      throw Mismatch("mixture(...) does not require grad: it was not built from p_gen, kappa and lambda with attn's ops");
    attn::sum(p * ref.tensor("mixture", "r")).backward();
    for (std::size_t i = 0; i < 3; ++i) {
      try {
        expect_grad_defined(a[i], names[i], hint::gradients);
        expect_close(std::string("the gradient of ") + names[i], ref.array("mixture", std::string("grad_") + names[i]),
                     a[i].grad(), mix0.describe(), 1e-9, 1e-11);
      } catch (const Mismatch& e) {
        try {
          expect_close("", ref.array("mixture", "p"), p, "", 1e-10, 1e-12);
        } catch (const Mismatch&) {
          throw Mismatch(e.what() + std::string("; p's values are wrong too") +
                             mixture_named(mix0, array_of(call_mixture(mix0), "p")),
                         hint::wrong_values);
        }
        if (a[i].grad().defined()) throw Mismatch(e.what(), hint::gradient_differs);
        throw;
      }
    }
    Random rng(22600);
    for (int trial = 0; trial < 3; ++trial) {
      MixtureInputs in = random_mixture(rng);
      std::vector<Tensor> x = {Tensor(in.p_gen, true), Tensor(in.kappa, true), Tensor(in.lambda, true)};
      expect_gradients(
          "mixture", [&](const std::vector<Tensor>& v) { return m.mixture(v[0], v[1], v[2], in.ids, in.ext); }, x,
          {"p_gen", "kappa", "lambda"});
    }
  });

  grader.check("the copy head on a padded batch: your attention's kappa and lambda, then your mixture, vs PyTorch "
               "(" + fixed_inputs + ", extended_vocab 10)",
               hint::head, [&] {
                 const Index ids = ids_of(ref.array("attention", "copy_ids"));
                 Attention a = call_attention(E0, lengths0, h0, K0);
                 Tensor got;
                 {
                   attn::no_grad guard;
                   got = m.mixture(ref.tensor("attention", "p_gen"), a.copy_weights, a.copy_gate, ids, 10);
                 }
                 try {
                   expect_close("p", ref.array("attention", "p"), got, fixed_inputs + ", extended_vocab 10", 1e-9,
                                1e-11);
                 } catch (const Mismatch& e) {
                   Array p = array_of(got, "p");
                   // Row 1's <pad> (id 0) is not among its real words: any mass there came from the padding.
                   if (p.dimension() == 3 && p.shape()[2] == 10 && std::abs(p(1, 0, 0)) > 1e-12)
                     throw Mismatch(e.what() + std::string("; row 1 gives the id <pad> (0) the probability ") +
                                        num_str(p(1, 0, 0)) + ": copy weights summed over the padding, whose "
                                        "copy_ids are <pad>; kappa must be 0 there (its softmax masked)",
                                    hint::head);
                   throw;
                 }
               });

  // The decoder step, with the library's GRUCell holding PyTorch's weights.
  attn::nn::GRUCell gru(4, 3);
  gru.weight_ih = ref.tensor("step", "w_ih");
  gru.weight_hh = ref.tensor("step", "w_hh");
  gru.bias_ih = ref.tensor("step", "b_ih");
  gru.bias_hh = ref.tensor("step", "b_hh");
  const Cell cell = [&gru](const Tensor& y, const Tensor& h) { return gru(y, h); };
  grader.check("step vs PyTorch: h_t = GRUCell(y_{t-1}, h_{t-1}), then the attention gated by h_t (" + fixed_inputs +
                   ", T 1)",
               hint::step, [&] {
                 const Tensor y = ref.tensor("step", "y_prev"), hp = ref.tensor("step", "h_prev");
                 Step got;
                 {
                   attn::no_grad guard;
                   got = m.step(E0, lengths0, y, hp, cell, K0);
                 }
                 const std::string inputs = fixed_inputs + ", y_prev [2, 4], h_prev [2, 3]";
                 expect_close("h", ref.array("step", "h"), got.h, inputs, 1e-10, 1e-12);
                 try {
                   expect_attention({ref.array("step", "a"), ref.array("step", "n"), ref.array("step", "kappa"),
                                     ref.array("step", "lambda")},
                                    got.attention, inputs);
                 } catch (const Mismatch& e) {
                   attn::no_grad guard;
                   try {
                     expect_attention(arrays_of(attention_of(E0, lengths0, attn::unsqueeze(hp, 1), K0, A::right)),
                                      got.attention, "");
                     throw Mismatch(e.what() + std::string("; your values are what this mistake gives: the attention "
                                                           "gated by h_{t-1}, the state before the step (the paper's "
                                                           "order; chapter 12 gates with the state after it)"),
                                    hint::step);
                   } catch (const Mismatch& inner) {
                     if (std::string(inner.what()).find("h_{t-1}") != std::string::npos) throw;
                   }
                   if (!attention_right_at_fixed())
                     throw Mismatch(e.what() + std::string("; your attention is wrong at these inputs too: its check "
                                                           "names the mistake"),
                                    hint::attention);
                   throw;
                 }
               });

  grader.check("step: gradcheck of y_prev and h_prev", hint::gradients, [&] {
    std::vector<Tensor> x = {ref.tensor("step", "y_prev", true), ref.tensor("step", "h_prev", true)};
    expect_gradients(
        "step",
        [&](const std::vector<Tensor>& v) {
          Step s = m.step(E0, lengths0, v[0], v[1], cell, K0);
          if (!s.h.defined() || !s.attention.weights.defined())
            throw Mismatch("step returned an undefined h or attention");
          return attn::concat({s.h, attn::reshape(s.attention.weights, {2, 6}),
                               attn::reshape(s.attention.copy_gate, {2, 1})},
                              -1);
        },
        x, {"y_prev", "h_prev"});
  });
  return grader.finish();
}

}  // namespace conv_copy
}  // namespace lab
