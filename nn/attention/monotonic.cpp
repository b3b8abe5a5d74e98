#include "monotonic.hpp"

#include "../init.hpp"

#include "../../core/backend/fused.hpp"
#include "../../core/ops.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace attn::nn {

namespace {

std::string shape_of(const Tensor& t) { return t.defined() ? shape_str(t.shape()) : std::string("undefined"); }

// Valid source lengths S [B] from `lengths` (all Tk when absent), each checked to be in [0, Tk].
std::vector<std::size_t> source_lengths(const std::string& op, const std::optional<Index>& lengths, std::size_t B,
                                        std::size_t Tk) {
  std::vector<std::size_t> S(B, Tk);
  if (!lengths) return S;
  if (lengths->dimension() != 1 || lengths->size() != B)
    throw ShapeError(op + ": expected lengths [B] = [" + std::to_string(B) + "], got " +
                     shape_str(Shape(lengths->shape().begin(), lengths->shape().end())));
  for (std::size_t i = 0; i < B; ++i) {
    if ((*lengths)(i) < 0 || static_cast<std::size_t>((*lengths)(i)) > Tk)
      throw ValueError(op + ": lengths must be in [0, " + std::to_string(Tk) + "], got " +
                       std::to_string((*lengths)(i)));
    S[i] = static_cast<std::size_t>((*lengths)(i));
  }
  return S;
}

// The energy of one (query, key) pair from raw arrays: sum_a v_hat_a tanh(q_a + k_a) + r.
template <class T>
double pair_energy(const xt::xarray<T>& q, const xt::xarray<T>& k, const std::vector<double>& v_hat, double r,
                   std::size_t b, std::size_t j) {
  double e = r;
  for (std::size_t a = 0; a < v_hat.size(); ++a)
    e += v_hat[a] * std::tanh(static_cast<double>(q(b, a)) + static_cast<double>(k(b, j, a)));
  return e;
}

// hard_step's loop for one dtype: moves each row's pointer to its first p >= 0.5.
template <class T>
Tensor hard_context(const xt::xarray<T>& q, const xt::xarray<T>& keys, const xt::xarray<T>& values,
                    const std::vector<double>& v_hat, double r, const std::vector<std::size_t>& S, Index& pointer,
                    Index& positions, std::size_t& pairs) {
  const std::size_t B = q.shape()[0], Dv = values.shape()[2];
  xt::xarray<T> context = xt::zeros<T>({B, Dv});  // [B, Dv]
  for (std::size_t b = 0; b < B; ++b) {
    std::size_t j = static_cast<std::size_t>(pointer(b));
    while (j < S[b]) {
      ++pairs;
      // p >= 0.5 exactly when e >= 0: stop and attend here.
      if (pair_energy(q, keys, v_hat, r, b, j) >= 0.0) break;
      ++j;
    }
    pointer(b) = static_cast<std::int64_t>(j < S[b] ? j : keys.shape()[1]);
    positions(b) = j < S[b] ? static_cast<std::int64_t>(j) : -1;
    if (j < S[b])
      for (std::size_t d = 0; d < Dv; ++d) context(b, d) = values(b, j, d);
  }
  return Tensor(std::move(context));
}

}  // namespace

// ---- the recurrence ----------------------------------------------------------

Tensor monotonic_initial_alignment(std::size_t B, std::size_t Tk, Dtype dtype) {
  if (Tk == 0) throw ShapeError("monotonic_initial_alignment: expected at least one source position, got Tk = 0");
  xt::xarray<double> a = xt::zeros<double>({B, Tk});
  for (std::size_t i = 0; i < B; ++i) a(i, 0) = 1.0;  // alpha_{-1,j} = 1 if j = 0: the reading starts at h_0
  return Tensor(std::move(a)).to(dtype);
}

Tensor monotonic_alignment_step(const Tensor& p, const Tensor& previous) {
  if (!p.defined() || !previous.defined() || p.dim() != 2 || previous.shape() != p.shape() || p.size(1) == 0)
    throw ShapeError("monotonic_alignment_step: expected p [B, Tk] and previous [B, Tk] of the same shape, Tk > 0, got p " +
                     shape_of(p) + " and previous " + shape_of(previous));
  std::vector<Tensor> alpha;  // alpha_ij for j = 0 .. Tk - 1, each [B]
  Tensor q, p_before;
  for (std::size_t j = 0; j < p.size(1); ++j) {
    Tensor p_j = select(p, 1, static_cast<long>(j));              // p_ij: [B]
    Tensor previous_j = select(previous, 1, static_cast<long>(j));  // alpha_{i-1,j}: [B]
    // q_ij: the probability that step i reaches j still reading; it arrives from j - 1 (not
    // stopped there) or starts at j (step i - 1 stopped at j).
    q = j == 0 ? previous_j : (1.0 - p_before) * q + previous_j;
    alpha.push_back(p_j * q);  // and stops at j
    p_before = p_j;
  }
  return stack(alpha, 1);  // [B, Tk]
}

Tensor monotonic_alignment(const Tensor& p, const std::optional<Index>& lengths, const std::optional<Tensor>& previous) {
  const std::string op = "monotonic_alignment";
  if (!p.defined() || p.dim() != 3 || p.size(2) == 0)
    throw ShapeError(op + ": expected p [B, Tq, Tk] with Tk > 0, got " + shape_of(p));
  const std::size_t B = p.size(0), Tq = p.size(1), Tk = p.size(2);
  if (previous && (!previous->defined() || previous->shape() != Shape{B, Tk}))
    throw ShapeError(op + ": expected previous alignment [B, Tk] = [" + std::to_string(B) + ", " + std::to_string(Tk) +
                     "], got " + shape_of(*previous));
  const std::vector<std::size_t> S = source_lengths(op, lengths, B, Tk);
  Mask padding = xt::zeros<bool>(Shape{B, 1, Tk});  // [B, 1, Tk], broadcast over the steps
  for (std::size_t i = 0; i < B; ++i)
    for (std::size_t j = S[i]; j < Tk; ++j) padding(i, 0, j) = true;
  Tensor p_valid = masked_fill(p, padding, 0.0);  // never stop on padding: alpha is 0 there
  Tensor alpha = previous ? *previous : monotonic_initial_alignment(B, Tk, p.dtype());
  std::vector<Tensor> steps;
  for (std::size_t i = 0; i < Tq; ++i) {
    alpha = monotonic_alignment_step(select(p_valid, 1, static_cast<long>(i)), alpha);  // [B, Tk]
    steps.push_back(alpha);
  }
  return stack(steps, 1);  // [B, Tq, Tk]
}

Index hard_monotonic_alignment(const Tensor& p, const std::optional<Index>& lengths) {
  const std::string op = "hard_monotonic_alignment";
  if (!p.defined() || p.dim() != 3) throw ShapeError(op + ": expected p [B, Tq, Tk], got " + shape_of(p));
  const std::size_t B = p.size(0), Tq = p.size(1), Tk = p.size(2);
  const std::vector<std::size_t> S = source_lengths(op, lengths, B, Tk);
  const xt::xarray<double> pv = p.to_array();
  Index out = Index::from_shape({B, Tq});
  for (std::size_t b = 0; b < B; ++b) {
    std::size_t j = 0;  // where the previous step stopped
    for (std::size_t i = 0; i < Tq; ++i) {
      while (j < S[b] && pv(b, i, j) < 0.5) ++j;
      out(b, i) = j < S[b] ? static_cast<std::int64_t>(j) : -1;
    }
  }
  return out;
}

// ---- the layer -----------------------------------------------------------------

MonotonicAttention::MonotonicAttention(std::size_t query_dim, std::size_t key_dim, std::size_t attn_dim,
                                       const MonotonicOptions& opts, Generator& gen)
    : Module("MonotonicAttention"), query_dim(query_dim), key_dim(key_dim), attn_dim(attn_dim), options(opts),
      gen_(gen) {
  if (query_dim == 0 || key_dim == 0 || attn_dim == 0)
    throw ValueError("MonotonicAttention: query_dim, key_dim and attn_dim must be positive");
  if (!(options.noise_std >= 0.0)) throw ValueError("MonotonicAttention: noise_std must be >= 0");
  W1 = zeros({attn_dim, query_dim});
  W2 = zeros({attn_dim, key_dim});
  b = zeros({attn_dim});
  v = zeros({attn_dim});
  g = full({1}, 1.0 / std::sqrt(static_cast<double>(attn_dim)));  // Raffel et al.'s initial g
  r = full({1}, options.offset_init);
  register_parameter("W1", W1);
  register_parameter("W2", W2);
  register_parameter("b", b);
  register_parameter("v", v);
  register_parameter("g", g);
  register_parameter("r", r);
  init::kaiming_uniform_(W1, std::sqrt(5.0), "fan_in", "leaky_relu", gen);
  init::kaiming_uniform_(W2, std::sqrt(5.0), "fan_in", "leaky_relu", gen);
  const double bound = 1.0 / std::sqrt(static_cast<double>(attn_dim));
  init::uniform_(v, -bound, bound, gen);
}

std::string MonotonicAttention::extra_repr() const {
  return "query_dim=" + std::to_string(query_dim) + ", key_dim=" + std::to_string(key_dim) +
         ", attn_dim=" + std::to_string(attn_dim) + ", noise_std=" + std::to_string(options.noise_std);
}

Tensor MonotonicAttention::precompute_keys(const Tensor& keys) const {
  if (!keys.defined() || keys.dim() != 3 || keys.size(2) != key_dim)
    throw ShapeError("MonotonicAttention: expected keys [B, Tk, " + std::to_string(key_dim) + "], got " + shape_of(keys));
  return linear(keys, W2);  // W2 h_j: [B, Tk, Dk] x [A, Dk]^T -> [B, Tk, A]
}

Tensor MonotonicAttention::energy(const Tensor& query, const Tensor& precomputed_keys) const {
  const std::string op = "MonotonicAttention";
  if (!query.defined() || query.dim() != 3 || query.size(2) != query_dim)
    throw ShapeError(op + ": expected query [B, Tq, " + std::to_string(query_dim) + "], got " + shape_of(query));
  if (!precomputed_keys.defined() || precomputed_keys.dim() != 3 || precomputed_keys.size(0) != query.size(0) ||
      precomputed_keys.size(2) != attn_dim)
    throw ShapeError(op + ": expected precomputed keys [B, Tk, " + std::to_string(attn_dim) + "] with B = " +
                     std::to_string(query.size(0)) + ", got " + shape_of(precomputed_keys));
  // The norm of v is g, learned apart from v's direction (weight normalisation), so the
  // energies cannot grow just by scaling v.
  Tensor v_hat = v * (g / sqrt(sum(v * v)));                         // g v / ||v||: [A]
  return additive_score(linear(query, W1, b), precomputed_keys, v_hat) + r;  // [B, Tq, A], [B, Tk, A] -> [B, Tq, Tk]
}

AttentionOutput MonotonicAttention::forward(const Tensor& query, const Tensor& keys, const Tensor& values,
                                            const std::optional<Index>& lengths, const std::optional<Tensor>& previous) {
  return forward_precomputed(query, precompute_keys(keys), values, lengths, previous);
}

AttentionOutput MonotonicAttention::forward_precomputed(const Tensor& query, const Tensor& precomputed_keys,
                                                        const Tensor& values, const std::optional<Index>& lengths,
                                                        const std::optional<Tensor>& previous) {
  Tensor e = energy(query, precomputed_keys);  // e_ij: [B, Tq, Tk]
  const std::size_t B = e.size(0), Tk = e.size(2);
  if (!values.defined() || values.dim() != 3 || values.size(0) != B || values.size(1) != Tk)
    throw ShapeError("MonotonicAttention: expected values [B, Tk, Dv] with B = " + std::to_string(B) + " and Tk = " +
                     std::to_string(Tk) + ", got " + shape_of(values));
  // Noise pushes training towards energies far from 0, where the soft p is almost 0 or 1,
  // so the expected alignment trained on is close to the hard one decoding uses.
  if (is_training() && options.noise_std > 0.0) e = e + randn(e.shape(), e.dtype(), gen_) * options.noise_std;
  Tensor p = sigmoid(e);                                          // p_ij: [B, Tq, Tk]
  Tensor weights = monotonic_alignment(p, lengths, previous);     // alpha_ij: [B, Tq, Tk]
  Tensor context = matmul(weights, values);                       // [B, Tq, Tk] x [B, Tk, Dv] -> [B, Tq, Dv]
  last_weights_ = weights.detach();
  return {context, weights};
}

Index MonotonicAttention::start_pointer(std::size_t B) { return xt::zeros<std::int64_t>({B}); }

HardMonotonicOutput MonotonicAttention::hard_step(const Tensor& query, const Tensor& precomputed_keys,
                                                  const Tensor& values, const std::optional<Index>& lengths,
                                                  Index& pointer) const {
  const std::string op = "MonotonicAttention::hard_step";
  if (!query.defined() || query.dim() != 2 || query.size(1) != query_dim)
    throw ShapeError(op + ": expected query [B, " + std::to_string(query_dim) + "], got " + shape_of(query));
  const std::size_t B = query.size(0);
  if (!precomputed_keys.defined() || precomputed_keys.dim() != 3 || precomputed_keys.size(0) != B ||
      precomputed_keys.size(2) != attn_dim)
    throw ShapeError(op + ": expected precomputed keys [B, Tk, " + std::to_string(attn_dim) + "] with B = " +
                     std::to_string(B) + ", got " + shape_of(precomputed_keys));
  const std::size_t Tk = precomputed_keys.size(1);
  if (!values.defined() || values.dim() != 3 || values.size(0) != B || values.size(1) != Tk ||
      values.dtype() != precomputed_keys.dtype())
    throw ShapeError(op + ": expected values [B, Tk, Dv] with B = " + std::to_string(B) + ", Tk = " +
                     std::to_string(Tk) + " and the keys' dtype, got " + shape_of(values));
  if (pointer.dimension() != 1 || pointer.size() != B)
    throw ShapeError(op + ": expected pointer [B] = [" + std::to_string(B) + "], got " +
                     shape_str(Shape(pointer.shape().begin(), pointer.shape().end())));
  for (std::size_t i = 0; i < B; ++i)
    if (pointer(i) < 0 || static_cast<std::size_t>(pointer(i)) > Tk)
      throw ValueError(op + ": pointer must be in [0, " + std::to_string(Tk) + "], got " + std::to_string(pointer(i)));
  const std::vector<std::size_t> S = source_lengths(op, lengths, B, Tk);

  no_grad guard;
  Tensor q = linear(query, W1, b).to(precomputed_keys.dtype());  // W1 s_i + b: [B, A], once per step
  const xt::xarray<double> v_arr = v.to_array();
  const double scale = g.item() / std::sqrt(xt::sum(v_arr * v_arr)());
  std::vector<double> v_hat(attn_dim);
  for (std::size_t a = 0; a < attn_dim; ++a) v_hat[a] = v_arr(a) * scale;
  Index positions = Index::from_shape({B});
  Tensor context = precomputed_keys.dtype() == Dtype::Float32
                       ? hard_context(q.data<float>(), precomputed_keys.data<float>(), values.data<float>(), v_hat,
                                      r.item(), S, pointer, positions, pairs_scored_)
                       : hard_context(q.data<double>(), precomputed_keys.data<double>(), values.data<double>(), v_hat,
                                      r.item(), S, pointer, positions, pairs_scored_);
  return {context, positions};
}

}  // namespace attn::nn
