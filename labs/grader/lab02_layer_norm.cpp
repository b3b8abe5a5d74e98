// The checks of lab02_layer_norm.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab02_layer_norm.hpp"

#include "labs/grader/grader.hpp"

namespace lab {
namespace layer_norm {

namespace hint {
inline const char* forward =
    "mean and variance over the last axis only (keepdim=true); the biased variance mean((x - mean)^2), "
    "dividing by D, not D - 1; then * gamma + beta";
inline const char* offset =
    "compute the variance as mean((x - mean)^2), not mean(x^2) - mean^2: with a large common offset the "
    "difference of two huge numbers loses the variance to rounding";
inline const char* eps = "eps goes inside the square root: (x - mean) / sqrt(var + eps), not / (sqrt(var) + eps)";
inline const char* backward =
    "with xhat = (x - mean) * rstd and gh = g * gamma: dx = rstd * (gh - mean(gh) - xhat * mean(gh * xhat)), "
    "three terms, the means over the last axis; dgamma = sum of g * xhat and dbeta = sum of g, summed over "
    "every axis but the last";
}  // namespace hint

inline Tensor layer_norm_op(const LayerNorm& ln, const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  Tensor y;
  {
    attn::no_grad guard;
    y = ln.forward(x, gamma, beta, eps);
  }
  auto backward = ln.backward;
  return learner_op("layer_norm_backward", y, {x, gamma, beta}, {"x", "gamma", "beta"},
                    [backward, eps](const std::vector<Tensor>& in, const Tensor&, const Tensor& g) {
                      auto [dx, dgamma, dbeta] = backward(in[0], in[1], g, eps);
                      return std::vector<Tensor>{dx, dgamma, dbeta};
                    });
}

Result grade(const LayerNorm& ln, std::ostream& os) {
  Grader grader(2, "layer norm, forward and backward", os);
  Reference ref("lab02_layer_norm");

  auto fixed_forward = [&](const std::string& case_name) {
    Tensor x = ref.tensor(case_name, "x"), gamma = ref.tensor(case_name, "gamma"), beta = ref.tensor(case_name, "beta");
    double eps = ref.scalar(case_name, "eps");
    attn::no_grad guard;
    expect_close("layer_norm(x, gamma, beta, eps=" + num_str(eps) + ")", ref.array(case_name, "y"),
                 ln.forward(x, gamma, beta, eps), shapes_str({{"x", x.shape()}, {"gamma", gamma.shape()}}), 1e-8,
                 1e-10);
  };
  grader.check("forward: values vs PyTorch (x [2, 3, 6])", hint::forward, [&] { fixed_forward("fixed"); });
  grader.check("forward: a large common offset (x near 1e6) vs PyTorch", hint::offset, [&] { fixed_forward("offset"); });
  grader.check("forward: a large eps (0.5) vs PyTorch", hint::eps, [&] { fixed_forward("big_eps"); });
  grader.check("forward: random shapes vs attn::layer_norm", hint::forward, [&] {
    Random rng(2000);
    for (int trial = 0; trial < 10; ++trial) {
      Shape shape = rng.shape(1, 4, 6);
      std::size_t d = shape.back();
      Tensor x(rng.array(shape, -3.0, 3.0)), gamma(rng.array({d})), beta(rng.array({d}));
      attn::no_grad guard;
      Tensor expected = attn::layer_norm(x, {d}, gamma, beta, 1e-5);
      expect_close("layer_norm(x, gamma, beta)", expected.data<double>(), ln.forward(x, gamma, beta, 1e-5),
                   shapes_str({{"x", shape}, {"gamma", {d}}}), 1e-8, 1e-10);
    }
  });
  grader.check("backward: gradients vs PyTorch (x [2, 3, 6])", hint::backward, [&] {
    Tensor x = ref.tensor("fixed", "x", true), gamma = ref.tensor("fixed", "gamma", true),
           beta = ref.tensor("fixed", "beta", true);
    layer_norm_op(ln, x, gamma, beta, ref.scalar("fixed", "eps")).backward(ref.tensor("fixed", "r"));
    std::string shapes = shapes_str({{"x", x.shape()}, {"gamma", gamma.shape()}, {"beta", beta.shape()}});
    expect_close("the gradient of x", ref.array("fixed", "grad_x"), x.grad(), shapes);
    expect_close("the gradient of gamma", ref.array("fixed", "grad_gamma"), gamma.grad(), shapes);
    expect_close("the gradient of beta", ref.array("fixed", "grad_beta"), beta.grad(), shapes);
  });
  auto random_gradcheck = [&](std::uint64_t seed, std::size_t min_dims, std::size_t max_dims) {
    Random rng(seed);
    for (int trial = 0; trial < 6; ++trial) {
      Shape shape = rng.shape(min_dims, max_dims, 5);
      shape.back() = rng.integer(2, 6);
      std::size_t d = shape.back();
      Tensor x(rng.array(shape, -2.0, 2.0), true), gamma(rng.array({d}, 0.5, 1.5), true), beta(rng.array({d}), true);
      expect_gradients("layer_norm",
                       [&](const std::vector<Tensor>& in) { return layer_norm_op(ln, in[0], in[1], in[2], 1e-5); },
                       {x, gamma, beta}, {"x", "gamma", "beta"});
    }
  };
  grader.check("backward: gradcheck, random 1-D and 2-D shapes", hint::backward, [&] { random_gradcheck(2100, 1, 2); });
  grader.check("backward: gradcheck, random 3-D and 4-D shapes", hint::backward, [&] { random_gradcheck(2200, 3, 4); });
  return grader.finish();
}

}  // namespace layer_norm
}  // namespace lab
