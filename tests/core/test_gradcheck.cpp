// Tests of the tester: attn::gradcheck must reject a wrong backward of every op
// family, a NaN anywhere, and a check of nothing, and its default tolerance must be
// tight enough to see a backward that is off by a fraction of a percent.
//
// Each planted op below records a forward with attn::record and a backward that is
// right or wrong on request, so every test shows both: the right one passes, the
// wrong one is caught.
#include "../helpers.hpp"

#include "core/record.hpp"

#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include <cmath>
#include <string>

using attn::Node;
using attn::Tensor;
using Array = xt::xarray<double>;
using Inputs = std::vector<Tensor>;

namespace {

// ---- one op per family, each with a right and a wrong backward -------------------

// elementwise: y = x^2, dy/dx = 2x (wrong: x, the factor 2 forgotten).
Tensor square(const Tensor& x, bool wrong) {
  Array y = x.data<double>() * x.data<double>();
  return attn::record<double>("square", std::move(y), {x}, [wrong](Node<double>& out) {
    const Array& xv = out.input(0).value;
    out.add_to_input_grad(0, Array(out.grad * (wrong ? 1.0 : 2.0) * xv));
  });
}

// reduction / broadcast: a [2, 3] + b [3] broadcast over rows; db sums g over the
// broadcast axis (wrong: the mean, an un-broadcast that divides by the row count).
Tensor broadcast_add(const Tensor& a, const Tensor& b, bool wrong) {
  Array y = a.data<double>() + b.data<double>();  // [2, 3] + [3] -> [2, 3]
  return attn::record<double>("broadcast_add", std::move(y), {a, b}, [wrong](Node<double>& out) {
    out.add_to_input_grad(0, Array(out.grad));
    Array db = xt::sum(out.grad, {0});  // [2, 3] -> [3]
    if (wrong) db /= static_cast<double>(out.grad.shape()[0]);
    out.add_to_input_grad(1, std::move(db));
  });
}

// reduction: mean over dim 1 of x [2, 4] -> [2]; dx = g / n (wrong: g, the 1/n forgotten).
Tensor row_mean(const Tensor& x, bool wrong) {
  const double n = static_cast<double>(x.size(1));
  Array y = xt::sum(x.data<double>(), {1}) / n;
  return attn::record<double>("row_mean", std::move(y), {x}, [wrong, n](Node<double>& out) {
    Array g = xt::view(out.grad, xt::all(), xt::newaxis());  // [2] -> [2, 1]
    Array dx = xt::zeros_like(out.input(0).value) + g / (wrong ? 1.0 : n);  // [2, 1] broadcast to [2, 4]
    out.add_to_input_grad(0, std::move(dx));
  });
}

// 2-D matrix product, square so that a missing transpose keeps the shapes:
// dA = G B^T, dB = A^T G (wrong: dA = G B).
Tensor matmul2(const Tensor& a, const Tensor& b, bool wrong) {
  Array y = xt::zeros<double>({a.size(0), b.size(1)});
  const Array &A = a.data<double>(), &B = b.data<double>();
  for (std::size_t i = 0; i < A.shape()[0]; ++i)
    for (std::size_t j = 0; j < B.shape()[1]; ++j)
      for (std::size_t k = 0; k < A.shape()[1]; ++k) y(i, j) += A(i, k) * B(k, j);
  return attn::record<double>("matmul2", std::move(y), {a, b}, [wrong](Node<double>& out) {
    const Array &A = out.input(0).value, &B = out.input(1).value, &G = out.grad;
    Array dA = xt::zeros_like(A), dB = xt::zeros_like(B);
    for (std::size_t i = 0; i < A.shape()[0]; ++i)
      for (std::size_t j = 0; j < B.shape()[1]; ++j)
        for (std::size_t k = 0; k < A.shape()[1]; ++k) {
          dA(i, k) += G(i, j) * (wrong ? B(j, k) : B(k, j));
          dB(k, j) += A(i, k) * G(i, j);
        }
    out.add_to_input_grad(0, std::move(dA));
    out.add_to_input_grad(1, std::move(dB));
  });
}

// softmax over the last dim of x [2, 4]: dx = y * (g - sum(g * y)) (wrong: y * g, the
// term that couples the row dropped).
Tensor softmax_rows(const Tensor& x, bool wrong) {
  const Array& xv = x.data<double>();
  Array e = xt::exp(xv - xt::view(xt::amax(xv, {1}), xt::all(), xt::newaxis()));
  Array y = e / xt::view(xt::sum(e, {1}), xt::all(), xt::newaxis());
  return attn::record<double>("softmax_rows", std::move(y), {x}, [wrong](Node<double>& out) {
    const Array& y = out.value;
    Array dot = xt::view(xt::sum(out.grad * y, {1}), xt::all(), xt::newaxis());  // [2, 1]
    out.add_to_input_grad(0, Array(wrong ? Array(y * out.grad) : Array(y * (out.grad - dot))));
  });
}

// indexing: rows of weight [4, 3] for ids {1, 3, 1}; the backward scatter-adds
// (wrong: assigns, so the repeated id 1 keeps only its last row's gradient).
Tensor embed(const Tensor& weight, const std::vector<std::size_t>& ids, bool wrong) {
  Array y = xt::zeros<double>({ids.size(), weight.size(1)});
  for (std::size_t i = 0; i < ids.size(); ++i) xt::view(y, i) = xt::view(weight.data<double>(), ids[i]);
  return attn::record<double>("embed", std::move(y), {weight}, [wrong, ids](Node<double>& out) {
    Array dw = xt::zeros_like(out.input(0).value);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (wrong) xt::view(dw, ids[i]) = xt::view(out.grad, i);
      else xt::view(dw, ids[i]) += xt::view(out.grad, i);
    }
    out.add_to_input_grad(0, std::move(dw));
  });
}

// shape: the transpose of a square x; dx = g^T (wrong: g, not transposed back).
Tensor transpose2(const Tensor& x, bool wrong) {
  Array y = xt::transpose(x.data<double>());
  return attn::record<double>("transpose2", std::move(y), {x}, [wrong](Node<double>& out) {
    out.add_to_input_grad(0, wrong ? Array(out.grad) : Array(xt::transpose(out.grad)));
  });
}

// norm: each row of x [2, 5] to zero mean and unit variance (no affine),
// dx = (g - mean(g) - xhat * mean(g * xhat)) / sigma (wrong: g / sigma, as if the mean
// and the variance did not depend on x).
Tensor normalize_rows(const Tensor& x, bool wrong) {
  const Array& xv = x.data<double>();
  const double n = static_cast<double>(xv.shape()[1]), eps = 1e-5;
  Array mu = xt::view(xt::sum(xv, {1}) / n, xt::all(), xt::newaxis());
  Array var = xt::view(xt::sum((xv - mu) * (xv - mu), {1}) / n, xt::all(), xt::newaxis());
  Array y = (xv - mu) / xt::sqrt(var + eps);
  return attn::record<double>("normalize_rows", std::move(y), {x}, [wrong, n, eps](Node<double>& out) {
    const Array& xv = out.input(0).value;
    const Array& xhat = out.value;
    Array mu = xt::view(xt::sum(xv, {1}) / n, xt::all(), xt::newaxis());
    Array sigma = xt::sqrt(xt::view(xt::sum((xv - mu) * (xv - mu), {1}) / n, xt::all(), xt::newaxis()) + eps);
    const Array& g = out.grad;
    if (wrong) {
      out.add_to_input_grad(0, Array(g / sigma));
      return;
    }
    Array mean_g = xt::view(xt::sum(g, {1}) / n, xt::all(), xt::newaxis());
    Array mean_gx = xt::view(xt::sum(g * xhat, {1}) / n, xt::all(), xt::newaxis());
    out.add_to_input_grad(0, Array((g - mean_g - xhat * mean_gx) / sigma));
  });
}

// An op whose value is x and whose gradient is off by the relative amount `error`.
Tensor scaled_identity(const Tensor& x, double error) {
  return attn::record<double>("scaled_identity", Array(x.data<double>()), {x}, [error](Node<double>& out) {
    out.add_to_input_grad(0, Array(out.grad * (1.0 + error)));
  });
}

// The identity with a NaN written into the gradient at flat index 0.
Tensor nan_backward(const Tensor& x) {
  return attn::record<double>("nan_backward", Array(x.data<double>()), {x}, [](Node<double>& out) {
    Array g = out.grad;
    g.flat(0) = NAN;
    out.add_to_input_grad(0, std::move(g));
  });
}

// Runs gradcheck on the right and the wrong backward of one family: the right one
// passes, the wrong one is reported with its input and index.
template <class F>
void right_passes_wrong_fails(const std::string& family, F&& op, const Inputs& inputs) {
  CAPTURE(family);
  const attn::GradcheckReport right = attn::gradcheck([&](const Inputs& in) { return op(in, false); }, inputs);
  INFO(right.str());
  CHECK(right.ok);
  const attn::GradcheckReport wrong = attn::gradcheck([&](const Inputs& in) { return op(in, true); }, inputs);
  INFO(wrong.str());
  CHECK_FALSE(wrong.ok);
  CHECK(wrong.str().find("MISMATCH") != std::string::npos);
}

}  // namespace

TEST_CASE("gradcheck rejects a wrong backward of every op family, and passes the right one") {
  right_passes_wrong_fails("elementwise", [](const Inputs& in, bool w) { return square(in[0], w); },
                           {test::randn({2, 3}, 1)});
  right_passes_wrong_fails("broadcast", [](const Inputs& in, bool w) { return broadcast_add(in[0], in[1], w); },
                           {test::randn({2, 3}, 2), test::randn({3}, 3)});
  right_passes_wrong_fails("reduction", [](const Inputs& in, bool w) { return row_mean(in[0], w); },
                           {test::randn({2, 4}, 4)});
  right_passes_wrong_fails("matmul", [](const Inputs& in, bool w) { return matmul2(in[0], in[1], w); },
                           {test::randn({3, 3}, 5), test::randn({3, 3}, 6)});
  right_passes_wrong_fails("softmax", [](const Inputs& in, bool w) { return softmax_rows(in[0], w); },
                           {test::randn({2, 4}, 7)});
  right_passes_wrong_fails("indexing", [](const Inputs& in, bool w) { return embed(in[0], {1, 3, 1}, w); },
                           {test::randn({4, 3}, 8)});
  right_passes_wrong_fails("shape", [](const Inputs& in, bool w) { return transpose2(in[0], w); },
                           {test::randn({3, 3}, 9)});
  right_passes_wrong_fails("norm", [](const Inputs& in, bool w) { return normalize_rows(in[0], w); },
                           {test::randn({2, 5}, 10)});
}

TEST_CASE("gradcheck names the input and the index of a wrong gradient") {
  // Only b's gradient is wrong: input 0 passes, input 1 fails, and the report says so.
  Tensor a = test::randn({2, 3}, 11), b = test::randn({3}, 12);
  const auto report = attn::gradcheck([](const Inputs& in) { return broadcast_add(in[0], in[1], true); }, {a, b});
  REQUIRE(report.inputs.size() == 2);
  CHECK(report.inputs[0].ok);
  CHECK_FALSE(report.inputs[1].ok);
  CHECK(report.inputs[1].input == 1);
  CHECK(report.inputs[1].worst_index.size() == 1);
  // The analytic value at the worst index is half the numeric one (the mean over 2 rows).
  CHECK(report.inputs[1].analytic_at_worst == doctest::Approx(report.inputs[1].numeric_at_worst / 2).epsilon(1e-6));
}

TEST_CASE("gradcheck's default tolerance sees a backward off by 0.2 percent; central differences are far tighter") {
  // A tolerance loosened a thousandfold (atol 1e-2, rtol 1) would pass this op.
  Tensor x = test::uniform({3, 4}, 1.0, 2.0, 13);
  auto f = [](double error) {
    return [error](const Inputs& in) { return attn::exp(scaled_identity(in[0], error)); };
  };
  const auto off = attn::gradcheck(f(2e-3), {x});
  INFO(off.str());
  CHECK_FALSE(off.ok);
  CHECK(attn::gradcheck(f(0.0), {x}).ok);
  // What the finite differences themselves achieve on this op: a relative error near 1e-9,
  // so a tolerance a hundred times tighter than the default still passes the right backward
  // and rejects one off by 1e-4.
  const auto exact = attn::gradcheck(f(0.0), {x});
  CHECK(exact.inputs[0].max_rel_error < 1e-7);
  attn::GradcheckOptions tight;
  tight.atol = 1e-7;
  tight.rtol = 1e-5;
  CHECK(attn::gradcheck(f(0.0), {x}, tight).ok);
  CHECK_FALSE(attn::gradcheck(f(1e-4), {x}, tight).ok);
}

TEST_CASE("gradcheck rejects a NaN gradient and a NaN finite difference, and reports the NaN") {
  Tensor x = test::randn({2, 3}, 14);
  const auto nan_grad = attn::gradcheck([](const Inputs& in) { return attn::mul(nan_backward(in[0]), 2.0); }, {x});
  INFO(nan_grad.str());
  CHECK_FALSE(nan_grad.ok);
  CHECK(std::isnan(nan_grad.inputs[0].max_abs_error));
  CHECK(std::isnan(nan_grad.inputs[0].analytic_at_worst));
  CHECK(nan_grad.inputs[0].worst_index == attn::Shape{0, 0});
  CHECK(nan_grad.str().find("nan") != std::string::npos);

  // log(x) with x = 5e-7 < eps: the step to x - eps leaves the domain, so the central
  // difference is NaN while the analytic gradient 1 / x is finite.
  Tensor y = attn::tensor({0.5, 5e-7, 2.0}, true);
  const auto nan_numeric = attn::gradcheck([](const Inputs& in) { return attn::log(in[0]); }, {y});
  INFO(nan_numeric.str());
  CHECK_FALSE(nan_numeric.ok);
  CHECK(std::isnan(nan_numeric.inputs[0].numeric_at_worst));
  CHECK(nan_numeric.inputs[0].worst_index == attn::Shape{1});

  // A NaN in the value itself (both gradients NaN) fails too.
  Tensor z = attn::tensor({-1.0, 4.0}, true);
  CHECK_FALSE(attn::gradcheck([](const Inputs& in) { return attn::sqrt(in[0]); }, {z}).ok);
}

TEST_CASE("gradcheck refuses a check of nothing") {
  // No input requires grad: gradcheck would compare nothing and call it a pass.
  Tensor x = test::randn({2, 2}, 15, /*requires_grad=*/false);
  CHECK_THROWS_WITH_SUBSTR(attn::gradcheck([](const Inputs& in) { return attn::tanh(in[0]); }, {x}),
                           attn::ValueError, "nothing to check");
  CHECK_THROWS_WITH_SUBSTR(attn::gradcheck([](const Inputs&) { return attn::ones({2}); }, {}), attn::ValueError,
                           "nothing to check");
  CHECK_THROWS_WITH_SUBSTR(attn::gradcheck([](const Inputs& in) { return in[0]; }, {Tensor()}), attn::ValueError,
                           "input 0 is undefined");
  // An input that requires grad but that f ignores is checked (both gradients are 0) ...
  Tensor used = test::randn({2}, 16), unused = test::randn({2}, 17);
  const auto r = attn::gradcheck([](const Inputs& in) { return attn::tanh(in[0]); }, {used, unused});
  CHECK(r.ok);
  CHECK(r.inputs.size() == 2);
  // ... and a function cut from its input (detach) is caught: its analytic gradient is 0.
  CHECK_FALSE(attn::gradcheck([](const Inputs& in) { return attn::tanh(in[0].detach()); }, {used}).ok);
}
