#include "score.hpp"

#include "../init.hpp"

#include "../../core/backend/fused.hpp"
#include "../../core/ops.hpp"

#include <cmath>
#include <string>

namespace attn::nn {

namespace {

// t must be [B, T, dim] (any dim when dim == 0).
void check_seq(const std::string& op, const char* what, const Tensor& t, std::size_t dim = 0) {
  if (!t.defined()) throw ValueError(op + ": " + what + " is undefined");
  if (t.dim() != 3 || (dim != 0 && t.size(-1) != dim))
    throw ShapeError(op + ": expected " + what + " [B, T, " + (dim ? std::to_string(dim) : std::string("D")) +
                     "], got " + shape_str(t.shape()));
}

void check_same_batch(const std::string& op, const Tensor& query, const Tensor& keys) {
  if (query.size(0) != keys.size(0))
    throw ShapeError(op + ": query and keys have different batch sizes, query " + shape_str(query.shape()) +
                     " and keys " + shape_str(keys.shape()));
}

// s_t . k_j for every pair: query [B, Tq, D], keys [B, Tk, D] -> [B, Tq, Tk].
Tensor dot_scores(const std::string& op, const Tensor& query, const Tensor& keys) {
  check_seq(op, "query", query);
  check_seq(op, "keys", keys);
  check_same_batch(op, query, keys);
  if (query.size(-1) != keys.size(-1))
    throw ShapeError(op + ": query and keys must have the same size D, got query " + shape_str(query.shape()) +
                     " and keys " + shape_str(keys.shape()));
  return matmul(query, transpose(keys, 1, 2));  // [B, Tq, D] x [B, D, Tk] -> [B, Tq, Tk]
}

// Uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)], as nn::Linear.
void init_vector(Tensor& v, Generator& gen) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(v.numel()));
  init::uniform_(v, -bound, bound, gen);
}

}  // namespace

// ---- DotScore, ScaledDotScore ------------------------------------------------

Tensor DotScore::precompute_keys(const Tensor& keys) const {
  check_seq("DotScore", "keys", keys);
  return keys;
}

Tensor DotScore::forward_precomputed(const Tensor& query, const Tensor& keys) const {
  return dot_scores("DotScore", query, keys);
}

Tensor ScaledDotScore::precompute_keys(const Tensor& keys) const {
  check_seq("ScaledDotScore", "keys", keys);
  return keys;
}

Tensor ScaledDotScore::forward_precomputed(const Tensor& query, const Tensor& keys) const {
  Tensor scores = dot_scores("ScaledDotScore", query, keys);  // [B, Tq, Tk]
  return scores / std::sqrt(static_cast<double>(keys.size(-1)));
}

// ---- GeneralScore --------------------------------------------------------------

GeneralScore::GeneralScore(std::size_t query_dim, std::size_t key_dim, Generator& gen)
    : Score("GeneralScore"), query_dim(query_dim), key_dim(key_dim) {
  W = zeros({query_dim, key_dim});
  register_parameter("W", W);
  init::kaiming_uniform_(W, std::sqrt(5.0), "fan_in", "leaky_relu", gen);  // U(+-1/sqrt(key_dim))
}

Tensor GeneralScore::precompute_keys(const Tensor& keys) const {
  check_seq("GeneralScore", "keys", keys, key_dim);
  return linear(keys, W);  // W h_j: [B, Tk, Dk] x [Dq, Dk]^T -> [B, Tk, Dq]
}

Tensor GeneralScore::forward_precomputed(const Tensor& query, const Tensor& projected_keys) const {
  check_seq("GeneralScore", "query", query, query_dim);
  return dot_scores("GeneralScore", query, projected_keys);  // s_t . (W h_j): [B, Tq, Tk]
}

std::string GeneralScore::extra_repr() const {
  return "query_dim=" + std::to_string(query_dim) + ", key_dim=" + std::to_string(key_dim);
}

// ---- ConcatScore ---------------------------------------------------------------

ConcatScore::ConcatScore(std::size_t query_dim, std::size_t key_dim, std::size_t attn_dim, Generator& gen)
    : Score("ConcatScore"), query_dim(query_dim), key_dim(key_dim), attn_dim(attn_dim) {
  W = zeros({attn_dim, query_dim + key_dim});
  v = zeros({attn_dim});
  register_parameter("W", W);
  register_parameter("v", v);
  init::kaiming_uniform_(W, std::sqrt(5.0), "fan_in", "leaky_relu", gen);
  init_vector(v, gen);
}

Tensor ConcatScore::precompute_keys(const Tensor& keys) const {
  check_seq("ConcatScore", "keys", keys, key_dim);
  Tensor W_h = narrow(W, 1, query_dim, key_dim);  // the columns of W that multiply h_j: [A, Dk]
  return linear(keys, W_h);                       // W_h h_j, once per sentence: [B, Tk, Dk] x [A, Dk]^T -> [B, Tk, A]
}

Tensor ConcatScore::forward_precomputed(const Tensor& query, const Tensor& projected_keys) const {
  check_seq("ConcatScore", "query", query, query_dim);
  check_seq("ConcatScore", "projected keys", projected_keys, attn_dim);
  check_same_batch("ConcatScore", query, projected_keys);
  // W [s_t; h_j] = W_s s_t + W_h h_j: the pair's hidden layer is a sum of two halves,
  // so v^T tanh(W_s s_t + W_h h_j) is the additive score (the same fused op).
  Tensor W_s = narrow(W, 1, 0, query_dim);  // the columns of W that multiply s_t: [A, Dq]
  return additive_score(linear(query, W_s), projected_keys, v);  // [B, Tq, A], [B, Tk, A], [A] -> [B, Tq, Tk]
}

std::string ConcatScore::extra_repr() const {
  return "query_dim=" + std::to_string(query_dim) + ", key_dim=" + std::to_string(key_dim) +
         ", attn_dim=" + std::to_string(attn_dim);
}

// ---- AdditiveScore -------------------------------------------------------------

AdditiveScore::AdditiveScore(std::size_t query_dim, std::size_t key_dim, std::size_t attn_dim, Generator& gen)
    : Score("AdditiveScore"), query_dim(query_dim), key_dim(key_dim), attn_dim(attn_dim) {
  W1 = zeros({attn_dim, query_dim});
  W2 = zeros({attn_dim, key_dim});
  v = zeros({attn_dim});
  register_parameter("W1", W1);
  register_parameter("W2", W2);
  register_parameter("v", v);
  init::kaiming_uniform_(W1, std::sqrt(5.0), "fan_in", "leaky_relu", gen);
  init::kaiming_uniform_(W2, std::sqrt(5.0), "fan_in", "leaky_relu", gen);
  init_vector(v, gen);
}

Tensor AdditiveScore::precompute_keys(const Tensor& keys) const {
  check_seq("AdditiveScore", "keys", keys, key_dim);
  return linear(keys, W2);  // W2 h_j: [B, Tk, Dk] x [A, Dk]^T -> [B, Tk, A]
}

Tensor AdditiveScore::forward_precomputed(const Tensor& query, const Tensor& projected_keys) const {
  check_seq("AdditiveScore", "query", query, query_dim);
  check_seq("AdditiveScore", "projected keys", projected_keys, attn_dim);
  check_same_batch("AdditiveScore", query, projected_keys);
  // v^T tanh(W1 s_t + W2 h_j) for every pair (t, j), composed from the ops before it:
  //   Tensor q = unsqueeze(linear(query, W1), 2);   // W1 s_t: [B, Tq, A] -> [B, Tq, 1, A]
  //   Tensor k = unsqueeze(projected_keys, 1);      // W2 h_j: [B, Tk, A] -> [B, 1, Tk, A]
  //   return matmul(tanh(q + k), v);                // [B, Tq, Tk, A] x [A] -> [B, Tq, Tk]
  // The same in one fused op (core/backend/additive_score.cpp, which runs exactly this
  // composition when attn::set_fused_ops(false)), one pass over [B, Tq, Tk, A] instead of five:
  return additive_score(linear(query, W1), projected_keys, v);  // [B, Tq, A], [B, Tk, A], [A] -> [B, Tq, Tk]
}

std::string AdditiveScore::extra_repr() const {
  return "query_dim=" + std::to_string(query_dim) + ", key_dim=" + std::to_string(key_dim) +
         ", attn_dim=" + std::to_string(attn_dim);
}

}  // namespace attn::nn
