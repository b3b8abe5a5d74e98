// Losses: gradients (float64 gradcheck), equality with PyTorch's cross_entropy
// (ignore_index, label_smoothing, every reduction), nll_loss and mse_loss
// (tools/reference/nn_layers.py), and bad targets.
#include "../helpers.hpp"
#include "../reference.hpp"

#include <cmath>
#include <tuple>

using attn::Tensor;
using attn::nn::Reduction;
using Inputs = std::vector<Tensor>;
namespace nn = attn::nn;

namespace {

Reduction reduction_named(const std::string& name) {
  if (name == "none") return Reduction::None;
  if (name == "sum") return Reduction::Sum;
  return Reduction::Mean;
}

}  // namespace

TEST_CASE("cross_entropy equals PyTorch: ignore_index, label_smoothing, every reduction") {
  test::Reference ref("nn_layers");
  for (const std::string reduction : {"none", "mean", "sum"})
    for (const std::string smoothing : {"0", "0.1"})
      for (const std::string ignore : {"ignore", "ignore7"}) {
        const std::string name = "cross_entropy_" + reduction + "_ls" + smoothing + "_" + ignore;
        INFO(name);
        Tensor logits = ref.tensor(name, "logits", true);
        Tensor loss = nn::cross_entropy(logits, ref.index(name, "targets"), ignore == "ignore" ? -100 : 7,
                                        std::stod(smoothing), reduction_named(reduction));
        CHECK(test::allclose(loss, ref.tensor(name, "loss"), 1e-10));
        loss.backward(ref.tensor(name, "gy"));
        CHECK(test::allclose(logits.grad(), ref.tensor(name, "grad_logits"), 1e-10));
      }
}

TEST_CASE("cross_entropy over a sequence: logits [B, T, C] with targets [B, T]") {
  test::Reference ref("nn_layers");
  const std::string name = "cross_entropy_sequence";
  Tensor logits = ref.tensor(name, "logits", true);
  Tensor loss = nn::cross_entropy(logits, ref.index(name, "targets"), -100, 0.2);
  CHECK(test::allclose(loss, ref.tensor(name, "loss"), 1e-10));
  loss.backward();
  CHECK(test::allclose(logits.grad(), ref.tensor(name, "grad_logits"), 1e-10));
  Tensor per_token = nn::cross_entropy(logits, ref.index(name, "targets"), -100, 0.0, Reduction::None);
  CHECK(per_token.shape() == attn::Shape{2, 3});
  CHECK(per_token.to_array()(1, 2) == 0.0);  // ignored
}

TEST_CASE("cross_entropy with PyTorch's class dim 1: logits [N, C, d1, ...] with targets [N, d1, ...]") {
  test::Reference ref("nn_layers");
  for (const bool fused : {true, false}) {
    attn::FusedOps guard(fused);
    for (const auto& [name, smoothing, reduction] :
         {std::tuple{"cross_entropy_kdim_3d", 0.1, Reduction::Mean}, std::tuple{"cross_entropy_kdim_3d_none", 0.0, Reduction::None},
          std::tuple{"cross_entropy_kdim_4d", 0.2, Reduction::Sum}}) {
      INFO(name << (fused ? " fused" : " unfused"));
      Tensor logits = ref.tensor(name, "logits", true);
      Tensor loss = nn::cross_entropy(logits, ref.index(name, "targets"),
                                      nn::CrossEntropyOptions().class_dim(1).label_smoothing(smoothing).reduction(reduction));
      CHECK(test::allclose(loss, ref.tensor(name, "loss"), 1e-10));
      loss.backward(ref.tensor(name, "gy"));
      CHECK(test::allclose(logits.grad(), ref.tensor(name, "grad_logits"), 1e-10));
    }
  }
  // class_dim -1 (the default) is the course's layout, the positional overload's numbers.
  test::Reference seq("nn_layers");
  Tensor logits = seq.tensor("cross_entropy_sequence", "logits");  // [2, 3, 4], class last
  const attn::Index t = seq.index("cross_entropy_sequence", "targets");
  CHECK(test::allclose(nn::cross_entropy(logits, t, nn::CrossEntropyOptions().label_smoothing(0.2)),
                       seq.tensor("cross_entropy_sequence", "loss"), 1e-10));
  CHECK(test::allclose(nn::cross_entropy(logits, t, nn::CrossEntropyOptions().class_dim(2).label_smoothing(0.2)),
                       seq.tensor("cross_entropy_sequence", "loss"), 1e-10));
}

TEST_CASE("cross_entropy: PyTorch's layout without class_dim is refused with what to write") {
  Tensor logits = attn::zeros({2, 4, 3});  // [N, C, T] as PyTorch
  const attn::Index targets = xt::zeros<std::int64_t>({2, 3});  // [N, T]
  CHECK_THROWS_WITH_SUBSTR(nn::cross_entropy(logits, targets), attn::ShapeError,
                           "got input [2, 4, 3] and targets [2, 3]. That is PyTorch's layout, class dim 1");
  CHECK_THROWS_WITH_SUBSTR(nn::cross_entropy(logits, targets), attn::ShapeError,
                           "nn::CrossEntropyOptions().class_dim(1)), or give logits [N, d1, ..., C]");
  CHECK_NOTHROW(nn::cross_entropy(logits, targets, nn::CrossEntropyOptions().class_dim(1)));
  // Shapes that fit neither layout still name both.
  CHECK_THROWS_WITH_SUBSTR(nn::cross_entropy(logits, attn::Index{{0, 1}}), attn::ShapeError,
                           "PyTorch's layout, input [N, C, d1, ...] with targets [N, d1, ...], needs");
  CHECK_THROWS_WITH_SUBSTR(nn::cross_entropy(logits, attn::Index{{0, 1}}, nn::CrossEntropyOptions().class_dim(1)),
                           attn::ShapeError, "with class_dim 1 expected targets shaped like the input without that dim, "
                                             "[2, 3], got input [2, 4, 3] and targets [1, 2]");
  CHECK_THROWS_WITH_SUBSTR(nn::cross_entropy(logits, targets, nn::CrossEntropyOptions().class_dim(3)),
                           attn::ValueError, "class_dim 3 is out of range for input [2, 4, 3]");
}

TEST_CASE("nll_loss and mse_loss equal PyTorch") {
  test::Reference ref("nn_layers");
  for (const std::string reduction : {"none", "mean", "sum"}) {
    INFO(reduction);
    std::string name = "nll_loss_" + reduction;
    Tensor log_probs = ref.tensor(name, "log_probs", true);
    Tensor loss = nn::nll_loss(log_probs, ref.index(name, "targets"), -100, reduction_named(reduction));
    CHECK(test::allclose(loss, ref.tensor(name, "loss"), 1e-10));
    loss.backward(ref.tensor(name, "gy"));
    CHECK(test::allclose(log_probs.grad(), ref.tensor(name, "grad_log_probs"), 1e-10));

    name = "mse_loss_" + reduction;
    Tensor a = ref.tensor(name, "input", true), b = ref.tensor(name, "target", true);
    loss = nn::mse_loss(a, b, reduction_named(reduction));
    CHECK(test::allclose(loss, ref.tensor(name, "loss"), 1e-10));
    loss.backward(ref.tensor(name, "gy"));
    CHECK(test::allclose(a.grad(), ref.tensor(name, "grad_input"), 1e-10));
    CHECK(test::allclose(b.grad(), ref.tensor(name, "grad_target"), 1e-10));
  }
}

TEST_CASE("losses: gradients by finite differences") {
  Tensor logits = test::randn({5, 4}, 1);
  const attn::Index targets = {2, 0, -100, 3, 3};
  for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    for (double smoothing : {0.0, 0.25}) {
      CHECK_GRADCHECK([&](const Inputs& in) { return nn::cross_entropy(in[0], targets, -100, smoothing, r); }, {logits});
    }
    CHECK_GRADCHECK([&](const Inputs& in) { return nn::nll_loss(attn::log_softmax(in[0], 1), targets, -100, r); },
                    {logits});
    CHECK_GRADCHECK([&](const Inputs& in) { return nn::mse_loss(in[0], in[1], r); }, {logits, test::randn({5, 4}, 2)});
  }
  Tensor seq = test::randn({2, 3, 4}, 3);
  const attn::Index seq_targets = {{0, 1, 2}, {3, 1, 1}};
  CHECK_GRADCHECK([&](const Inputs& in) { return nn::cross_entropy(in[0], seq_targets, 1, 0.1); }, {seq});
}

TEST_CASE("cross_entropy: formulas by hand") {
  // Two classes with logits 0 and log 3: p = (1/4, 3/4).
  Tensor logits = attn::tensor({{0.0, std::log(3.0)}});
  CHECK(nn::cross_entropy(logits, attn::Index{1}).item() == doctest::Approx(-std::log(0.75)).epsilon(1e-14));
  // Smoothing 0.5 over 2 classes: target (1/4, 3/4) for class 1.
  const double expected = -(0.25 * std::log(0.25) + 0.75 * std::log(0.75));
  CHECK(nn::cross_entropy(logits, attn::Index{1}, -100, 0.5).item() == doctest::Approx(expected).epsilon(1e-14));
  // Mean over the targets that count only.
  Tensor two = attn::tensor({{0.0, std::log(3.0)}, {5.0, -5.0}});
  CHECK(nn::cross_entropy(two, attn::Index{1, -100}).item() == doctest::Approx(-std::log(0.75)).epsilon(1e-14));
  // Every target ignored: the mean is 0 / 0, NaN as in PyTorch; the sum is 0.
  CHECK(std::isnan(nn::cross_entropy(two, attn::Index{-100, -100}).item()));
  CHECK(nn::cross_entropy(two, attn::Index{-100, -100}, -100, 0.0, Reduction::Sum).item() == 0.0);
}

TEST_CASE("losses: bad shapes and targets are rejected") {
  Tensor logits = attn::zeros({3, 4});
  CHECK_THROWS_WITH_SUBSTR(nn::cross_entropy(logits, attn::Index{0, 1}), attn::ShapeError,
                           "got input [3, 4] and targets [2]");
  CHECK_THROWS_WITH_SUBSTR(nn::cross_entropy(logits, attn::Index{{0, 1, 2}}), attn::ShapeError, "cross_entropy:");
  CHECK_THROWS_WITH_SUBSTR(nn::cross_entropy(logits, attn::Index{0, 4, 1}), attn::ValueError,
                           "cross_entropy: target 4 is out of range for 4 classes");
  CHECK_THROWS_WITH_SUBSTR(nn::cross_entropy(logits, attn::Index{0, -1, 1}), attn::ValueError, "target -1");
  CHECK_THROWS_WITH_SUBSTR(nn::cross_entropy(logits, attn::Index{0, 1, 1}, -100, 1.5), attn::ValueError,
                           "label_smoothing must be between 0 and 1");
  CHECK_THROWS_WITH_SUBSTR(nn::nll_loss(logits, attn::Index{9, 1, 1}), attn::ValueError, "nll_loss: target 9");
  CHECK_THROWS_AS(nn::cross_entropy(Tensor(), attn::Index{0}), attn::ValueError);
  CHECK_THROWS_WITH_SUBSTR(nn::mse_loss(logits, attn::zeros({4, 3})), attn::ShapeError,
                           "mse_loss: expected input and target of the same shape, got [3, 4] and [4, 3]");
  CHECK_THROWS_AS(nn::mse_loss(logits, attn::zeros({3, 4}, attn::Dtype::Float32)), attn::ValueError);
}

TEST_CASE("losses in float32") {
  Tensor logits = attn::tensor({{1.0, 2.0, 0.5}, {0.1, 0.2, 3.0}}, true, attn::Dtype::Float32);
  Tensor loss = nn::cross_entropy(logits, attn::Index{1, 2}, -100, 0.1);
  CHECK(loss.dtype() == attn::Dtype::Float32);
  Tensor ref64 = nn::cross_entropy(logits.detach().to(attn::Dtype::Float64), attn::Index{1, 2}, -100, 0.1);
  CHECK(loss.item() == doctest::Approx(ref64.item()).epsilon(1e-6));
  loss.backward();
  CHECK(logits.grad().dtype() == attn::Dtype::Float32);
}
