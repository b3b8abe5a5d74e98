#include "../helpers.hpp"

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include <cmath>
#include <functional>

using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace nn = attn::nn;

namespace {

using test::with_parameters;

std::vector<std::string> names(const nn::Module& m) { return test::parameter_names(m); }

// The score of one (query, key) pair, written as in the papers: a plain loop.
using PairScore = std::function<double(const xt::xarray<double>& s, const xt::xarray<double>& h)>;

xt::xarray<double> loop_scores(const Tensor& query, const Tensor& keys, const PairScore& score) {
  const auto q = query.to_array(), k = keys.to_array();
  const std::size_t B = q.shape()[0], Tq = q.shape()[1], Tk = k.shape()[1];
  xt::xarray<double> e = xt::zeros<double>({B, Tq, Tk});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < Tq; ++t)
      for (std::size_t j = 0; j < Tk; ++j)
        e(b, t, j) = score(xt::view(q, b, t, xt::all()), xt::view(k, b, j, xt::all()));
  return e;
}

double dot(const xt::xarray<double>& a, const xt::xarray<double>& b) { return xt::sum(a * b)(); }

xt::xarray<double> matvec(const Tensor& W, const xt::xarray<double>& x) {
  const auto w = W.to_array();
  xt::xarray<double> y = xt::zeros<double>({w.shape()[0]});
  for (std::size_t i = 0; i < w.shape()[0]; ++i)
    for (std::size_t j = 0; j < w.shape()[1]; ++j) y(i) += w(i, j) * x(j);
  return y;
}

void check_precomputed_matches(const nn::Score& score, const Tensor& q, const Tensor& k) {
  Tensor pk = score.precompute_keys(k);
  CHECK(test::allclose(score.forward_precomputed(q, pk), score(q, k), 0.0));
}

}  // namespace

TEST_CASE("DotScore and ScaledDotScore: values and gradients") {
  Tensor q = test::randn({2, 2, 3}, 1), k = test::randn({2, 4, 3}, 2);
  nn::DotScore dot_score;
  nn::ScaledDotScore scaled;
  Tensor e = dot_score(q, k);
  CHECK(e.shape() == attn::Shape{2, 2, 4});
  CHECK(test::allclose(e, Tensor(loop_scores(q, k, dot)), 1e-14));
  CHECK(test::allclose(scaled(q, k), Tensor(xt::xarray<double>(loop_scores(q, k, dot) / std::sqrt(3.0))), 1e-14));
  CHECK(dot_score.parameters().empty());
  CHECK_GRADCHECK([&](const Inputs& in) { return dot_score(in[0], in[1]); }, {q, k});
  CHECK_GRADCHECK([&](const Inputs& in) { return scaled(in[0], in[1]); }, {q, k});
  check_precomputed_matches(scaled, q, k);
}

TEST_CASE("GeneralScore: s^T W h, values, names and gradients") {
  attn::manual_seed(10);
  nn::GeneralScore score(3, 5);
  CHECK(names(score) == std::vector<std::string>{"W"});
  CHECK(score.W.shape() == attn::Shape{3, 5});
  Tensor q = test::randn({2, 2, 3}, 3), k = test::randn({2, 4, 5}, 4);
  auto expected = loop_scores(q, k, [&](const auto& s, const auto& h) { return dot(s, matvec(score.W, h)); });
  CHECK(test::allclose(score(q, k), Tensor(expected), 1e-14));
  CHECK_GRADCHECK([&](const Inputs& in) { return score(in[0], in[1]); }, with_parameters(score, {q, k}));
  check_precomputed_matches(score, q, k);
  CHECK(score.precompute_keys(k).shape() == attn::Shape{2, 4, 3});  // W h_j
}

TEST_CASE("ConcatScore: v^T tanh(W [s; h]), values, names and gradients") {
  attn::manual_seed(11);
  nn::ConcatScore score(3, 2, 4);
  CHECK(names(score) == std::vector<std::string>{"W", "v"});
  CHECK(score.W.shape() == attn::Shape{4, 5});
  Tensor q = test::randn({2, 2, 3}, 5), k = test::randn({2, 3, 2}, 6);
  auto expected = loop_scores(q, k, [&](const auto& s, const auto& h) {
    xt::xarray<double> sh = xt::concatenate(xt::xtuple(s, h));  // [s; h]
    return dot(score.v.to_array(), xt::tanh(matvec(score.W, sh)));
  });
  CHECK(test::allclose(score(q, k), Tensor(expected), 1e-14));
  CHECK_GRADCHECK([&](const Inputs& in) { return score(in[0], in[1]); }, with_parameters(score, {q, k}));
  check_precomputed_matches(score, q, k);
}

TEST_CASE("ConcatScore split as W_s s + W_h h equals the pairwise W [s; h], values and gradients") {
  attn::manual_seed(14);
  nn::ConcatScore score(3, 2, 4);
  Tensor q = test::randn({2, 3, 3}, 11), k = test::randn({2, 5, 2}, 12);
  // The score as first written: every (t, j) pair concatenated, then one matrix W.
  auto pairwise = [&](const Tensor& query, const Tensor& keys) {
    const std::size_t B = query.size(0), Tq = query.size(1), Tk = keys.size(1);
    Tensor s = attn::expand(attn::unsqueeze(query, 2), {B, Tq, Tk, 3});  // [B, Tq, Tk, Dq]
    Tensor h = attn::expand(attn::unsqueeze(keys, 1), {B, Tq, Tk, 2});   // [B, Tq, Tk, Dk]
    Tensor hidden = attn::tanh(attn::linear(attn::concat({s, h}, -1), score.W));  // [B, Tq, Tk, A]
    return attn::matmul(hidden, score.v);                                          // [B, Tq, Tk]
  };
  Tensor split = score(q, k), old = pairwise(q, k);
  CHECK(test::allclose(split, old, 1e-14));
  CHECK(score.precompute_keys(k).shape() == attn::Shape{2, 5, 4});  // W_h h_j, once per sentence
  Tensor w = test::randn({2, 3, 5}, 13, false);
  auto grads = [&](Tensor loss) {
    for (Tensor t : {q, k, score.W, score.v}) t.zero_grad();
    loss.backward();
    std::vector<xt::xarray<double>> g;
    for (const Tensor& t : {q, k, score.W, score.v}) g.push_back(t.grad().to_array());
    return g;
  };
  auto g_split = grads(attn::sum(split * w)), g_old = grads(attn::sum(old * w));
  for (std::size_t i = 0; i < g_split.size(); ++i) CHECK(xt::allclose(g_split[i], g_old[i], 1e-12, 1e-14));
  CHECK_GRADCHECK([&](const Inputs& in) { return score.forward_precomputed(in[0], score.precompute_keys(in[1])); },
                  with_parameters(score, {q, k}));
}

TEST_CASE("AdditiveScore: v^T tanh(W1 s + W2 h), values, names, gradients, cached keys") {
  attn::manual_seed(12);
  nn::AdditiveScore score(3, 2, 4);
  CHECK(names(score) == std::vector<std::string>{"W1", "W2", "v"});
  CHECK(score.W1.shape() == attn::Shape{4, 3});
  CHECK(score.W2.shape() == attn::Shape{4, 2});
  Tensor q = test::randn({2, 2, 3}, 7), k = test::randn({2, 3, 2}, 8);
  auto expected = loop_scores(q, k, [&](const auto& s, const auto& h) {
    return dot(score.v.to_array(), xt::tanh(matvec(score.W1, s) + matvec(score.W2, h)));
  });
  CHECK(test::allclose(score(q, k), Tensor(expected), 1e-14));
  CHECK_GRADCHECK([&](const Inputs& in) { return score(in[0], in[1]); }, with_parameters(score, {q, k}));
  // A decoder computes W2 h once, then scores one step at a time.
  Tensor pk = score.precompute_keys(k);
  CHECK(pk.shape() == attn::Shape{2, 3, 4});
  Tensor step1 = score.forward_precomputed(attn::narrow(q, 1, 1, 1), pk);  // [B, 1, Tk]
  CHECK(test::allclose(step1, attn::narrow(score(q, k), 1, 1, 1), 1e-14));
  CHECK_GRADCHECK([&](const Inputs& in) { return score.forward_precomputed(in[0], score.precompute_keys(in[1])); },
                  with_parameters(score, {attn::narrow(q, 1, 0, 1).detach().requires_grad_(), k}));
}

TEST_CASE("score functions work in float32") {
  attn::manual_seed(13);
  nn::AdditiveScore additive(3, 2, 4);
  nn::GeneralScore general(3, 2);
  nn::ConcatScore concat(3, 2, 4);
  Tensor q = test::randn({1, 2, 3}, 9, false), k = test::randn({1, 3, 2}, 10, false);
  for (nn::Score* s : std::vector<nn::Score*>{&additive, &general, &concat}) {
    Tensor e64 = (*s)(q, k);
    s->to(attn::Dtype::Float32);
    Tensor e32 = (*s)(q.to(attn::Dtype::Float32), k.to(attn::Dtype::Float32));
    CHECK(e32.dtype() == attn::Dtype::Float32);
    CHECK(test::allclose(e32, e64, 1e-5));
  }
}

TEST_CASE("score functions reject bad shapes with clear messages") {
  nn::DotScore dot_score;
  CHECK_THROWS_WITH_SUBSTR(dot_score(attn::zeros({2, 1, 3}), attn::zeros({2, 4, 5})), attn::ShapeError,
                           "DotScore: query and keys must have the same size D, got query [2, 1, 3] and keys [2, 4, 5]");
  CHECK_THROWS_WITH_SUBSTR(dot_score(attn::zeros({2, 1, 3}), attn::zeros({3, 4, 3})), attn::ShapeError,
                           "DotScore: query and keys have different batch sizes, query [2, 1, 3] and keys [3, 4, 3]");
  CHECK_THROWS_WITH_SUBSTR(dot_score(attn::zeros({1, 3}), attn::zeros({2, 4, 3})), attn::ShapeError,
                           "DotScore: expected query [B, T, D], got [1, 3]");
  nn::ScaledDotScore scaled;
  CHECK_THROWS_WITH_SUBSTR(scaled(attn::zeros({2, 1, 3}), attn::zeros({2, 4, 2})), attn::ShapeError, "ScaledDotScore:");
  nn::GeneralScore general(3, 5);
  CHECK_THROWS_WITH_SUBSTR(general(attn::zeros({2, 1, 3}), attn::zeros({2, 4, 4})), attn::ShapeError,
                           "GeneralScore: expected keys [B, T, 5], got [2, 4, 4]");
  CHECK_THROWS_WITH_SUBSTR(general(attn::zeros({2, 1, 4}), attn::zeros({2, 4, 5})), attn::ShapeError,
                           "GeneralScore: expected query [B, T, 3], got [2, 1, 4]");
  CHECK_THROWS_WITH_SUBSTR(general(attn::zeros({1, 1, 3}), attn::zeros({2, 4, 5})), attn::ShapeError,
                           "GeneralScore: query and keys have different batch sizes");
  nn::AdditiveScore additive(3, 2, 4);
  CHECK_THROWS_WITH_SUBSTR(additive(attn::zeros({2, 1, 3}), attn::zeros({1, 4, 2})), attn::ShapeError,
                           "AdditiveScore: query and keys have different batch sizes");
  CHECK_THROWS_WITH_SUBSTR(additive(attn::zeros({2, 1, 2}), attn::zeros({2, 4, 2})), attn::ShapeError,
                           "AdditiveScore: expected query [B, T, 3], got [2, 1, 2]");
  nn::ConcatScore concat(3, 2, 4);
  CHECK_THROWS_WITH_SUBSTR(concat(attn::zeros({2, 1, 3}), attn::zeros({2, 4, 3})), attn::ShapeError,
                           "ConcatScore: expected keys [B, T, 2], got [2, 4, 3]");
}
