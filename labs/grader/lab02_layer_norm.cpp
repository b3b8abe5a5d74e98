// The checks of lab02_layer_norm.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab02_layer_norm.hpp"

#include "labs/grader/grader.hpp"

namespace lab {
namespace layer_norm {

namespace hint {
inline const char* forward =
    "y = (x - mean) / sqrt(var + eps) * gamma + beta, with the mean and the biased variance mean((x - mean)^2) over "
    "the last axis only (keepdim=true)";
inline const char* offset =
    "compute the variance as mean((x - mean)^2), not mean(x^2) - mean^2: with a large common offset the "
    "difference of two huge numbers loses the variance to rounding";
inline const char* eps = "eps goes inside the square root: (x - mean) / sqrt(var + eps), not / (sqrt(var) + eps)";
inline const char* backward =
    "with xhat = (x - mean) * rstd and gh = g * gamma: dx = rstd * (gh - mean(gh) - xhat * mean(gh * xhat)), "
    "three terms, the means over the last axis; dgamma = sum of g * xhat and dbeta = sum of g, summed over "
    "every axis but the last";
inline const char* backward_eps =
    "your backward is right with eps 1e-5 and wrong with another eps: it must use its eps argument, "
    "rstd = 1 / sqrt(var + eps) with the eps it is given";
inline const char* backward_no_eps =
    "use eps in the backward too: rstd = 1 / sqrt(var + eps), the forward's, with the eps argument it is given";
inline const char* forward_first =
    "your backward is right; the forward is wrong (see its check): the gradcheck differentiates your forward, so "
    "fix the forward first";
inline const char* backward_offset =
    "your backward is right without the offset and wrong with it: compute the variance in the backward as "
    "mean((x - mean)^2), not mean(x^2) - mean^2 (the difference of two huge numbers loses it to rounding)";
}  // namespace hint

// The usual mistakes of the forward, to name the one a learner's values match.
enum class Variant { unbiased, eps_outside, eps_ignored, naive_variance, swapped };

inline Tensor forward_variant(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps, Variant v) {
  Tensor mean = attn::mean(x, {-1}, true), centered = x - mean;
  double d = static_cast<double>(x.size(-1));
  Tensor var = v == Variant::unbiased         ? attn::sum(centered * centered, {-1}, true) / (d - 1.0)
               : v == Variant::naive_variance ? attn::mean(x * x, {-1}, true) - mean * mean
                                              : attn::mean(centered * centered, {-1}, true);
  Tensor denominator = v == Variant::eps_outside ? attn::sqrt(var) + eps
                       : v == Variant::eps_ignored ? attn::sqrt(var)
                                                   : attn::sqrt(var + eps);
  return v == Variant::swapped ? centered / denominator * beta + gamma : centered / denominator * gamma + beta;
}

// The mistake whose values the learner's forward output matches, as {what, hint}, or {"", ""}.
inline std::pair<std::string, std::string> diagnose_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                                            double eps, const Tensor& got) {
  const std::vector<std::tuple<Variant, const char*, const char*>> mistakes = {
      {Variant::unbiased, "the unbiased variance",
       "layer norm divides the squared deviations by D, not D - 1: var = mean((x - mean)^2), the biased variance"},
      {Variant::eps_outside, "eps added outside the square root", hint::eps},
      {Variant::eps_ignored, "eps left out, (x - mean) / sqrt(var)",
       "use the eps argument: (x - mean) / sqrt(var + eps), eps inside the square root"},
      {Variant::naive_variance, "the variance as mean(x^2) - mean^2", hint::offset},
      {Variant::swapped, "gamma and beta swapped, xhat * beta + gamma",
       "y = xhat * gamma + beta: gamma scales and beta shifts (the arguments come in the order x, gamma, beta, eps)"}};
  attn::no_grad guard;
  if (x.size(-1) < 2) return {"", ""};
  for (const auto& [variant, what, hint] : mistakes) {
    try {
      expect_close("y", forward_variant(x, gamma, beta, eps, variant).data<double>(), got, "", 1e-9, 1e-12);
      return {std::string("; your values are what this mistake gives: ") + what, hint};
    } catch (const Mismatch&) {
    }
  }
  return {"", ""};
}

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
    Tensor y = ln.forward(x, gamma, beta, eps);
    try {
      expect_close("layer_norm(x, gamma, beta, eps=" + num_str(eps) + ")", ref.array(case_name, "y"), y,
                   shapes_str({{"x", x.shape()}, {"gamma", gamma.shape()}}), 1e-8, 1e-10);
    } catch (const Mismatch& m) {
      auto [what, hint] = diagnose_forward(x, gamma, beta, eps, y);
      throw Mismatch(m.what() + what, hint);
    }
  };
  grader.check("forward: values vs PyTorch (x [2, 3, 6])", hint::forward, [&] { fixed_forward("fixed"); });
  grader.check("forward: a large common offset (x near 1e6) vs PyTorch", hint::forward, [&] {
    try {
      fixed_forward("offset");
    } catch (const Mismatch& m) {
      if (!m.hint.empty()) throw;
      // Named by what the values show: right once the offset is taken off, wrong with it.
      Tensor x = ref.tensor("offset", "x"), gamma = ref.tensor("offset", "gamma"), beta = ref.tensor("offset", "beta");
      Tensor centered(Array(x.data<double>() - 1e6));  // exact: x lies within a few units of 1e6
      attn::no_grad guard;
      try {
        expect_close("y", attn::layer_norm(centered, {x.size(-1)}, gamma, beta, 1e-5).data<double>(),
                     ln.forward(centered, gamma, beta, 1e-5), "", 1e-8, 1e-10);
      } catch (const Mismatch&) {
        throw m;
      }
      throw Mismatch(m.what() + std::string("; the same x without the offset gives the right values"), hint::offset);
    }
  });
  grader.check("forward: a large eps (0.5) vs PyTorch", hint::forward, [&] {
    try {
      fixed_forward("big_eps");
    } catch (const Mismatch& m) {
      if (!m.hint.empty()) throw;
      // Named by what the values show: right with eps 1e-5, wrong with 0.5.
      Tensor x = ref.tensor("big_eps", "x"), gamma = ref.tensor("big_eps", "gamma"), beta = ref.tensor("big_eps", "beta");
      attn::no_grad guard;
      try {
        expect_close("y", attn::layer_norm(x, {x.size(-1)}, gamma, beta, 1e-5).data<double>(),
                     ln.forward(x, gamma, beta, 1e-5), "", 1e-8, 1e-10);
      } catch (const Mismatch&) {
        throw m;
      }
      throw Mismatch(m.what() + std::string("; with eps 1e-5 the same x gives the right values"), hint::eps);
    }
  });
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
  // Whether the learner's backward, given `eps`, gives attn::layer_norm's gradients with `ref_eps`.
  auto backward_matches = [&](const Tensor& x, const Tensor& gamma, const Tensor& beta, const Tensor& r, double eps,
                              double ref_eps) {
    Tensor xl(x.data<double>(), true), gl(gamma.data<double>(), true), bl(beta.data<double>(), true);
    Tensor xr(x.data<double>(), true), gr(gamma.data<double>(), true), br(beta.data<double>(), true);
    try {
      layer_norm_op(ln, xl, gl, bl, eps).backward(r);
      attn::layer_norm(xr, {x.size(-1)}, gr, br, ref_eps).backward(r);
      expect_close("dx", xr.grad().data<double>(), xl.grad(), "", 1e-8, 1e-10);
      expect_close("dgamma", gr.grad().data<double>(), gl.grad(), "", 1e-8, 1e-10);
      expect_close("dbeta", br.grad().data<double>(), bl.grad(), "", 1e-8, 1e-10);
    } catch (const std::exception&) {
      return false;
    }
    return true;
  };
  auto no_eps = [&](const Mismatch& m, const Tensor& x, const Tensor& gamma, const Tensor& beta, const Tensor& r,
                    double eps) {
    if (backward_matches(x, gamma, beta, r, eps, 0.0))
      throw Mismatch(m.what() + std::string("; your gradients are what eps 0 gives: eps left out of the backward"),
                     hint::backward_no_eps);
  };
  grader.check("backward: gradients vs PyTorch (x [2, 3, 6])", hint::backward, [&] {
    try {
      Tensor x = ref.tensor("fixed", "x", true), gamma = ref.tensor("fixed", "gamma", true),
             beta = ref.tensor("fixed", "beta", true);
      layer_norm_op(ln, x, gamma, beta, ref.scalar("fixed", "eps")).backward(ref.tensor("fixed", "r"));
      std::string shapes = shapes_str({{"x", x.shape()}, {"gamma", gamma.shape()}, {"beta", beta.shape()}});
      expect_close("the gradient of x", ref.array("fixed", "grad_x"), x.grad(), shapes);
      expect_close("the gradient of gamma", ref.array("fixed", "grad_gamma"), gamma.grad(), shapes);
      expect_close("the gradient of beta", ref.array("fixed", "grad_beta"), beta.grad(), shapes);
    } catch (const Mismatch& m) {
      no_eps(m, ref.tensor("fixed", "x"), ref.tensor("fixed", "gamma"), ref.tensor("fixed", "beta"),
             ref.tensor("fixed", "r"), ref.scalar("fixed", "eps"));
      throw;
    }
  });
  // The learner's gradients of L = sum(y * r) at x, against attn::layer_norm's at x_ref
  // (the same point when x_ref is x; layer norm ignores a common offset, so its gradients
  // at x + c are those at x).
  auto expect_backward = [&](const Tensor& x, const Tensor& x_ref, const Tensor& gamma, const Tensor& beta,
                             const Tensor& r, double eps, double rtol, double atol) {
    Tensor xl(x.data<double>(), true), gl(gamma.data<double>(), true), bl(beta.data<double>(), true);
    layer_norm_op(ln, xl, gl, bl, eps).backward(r);
    Tensor xr(x_ref.data<double>(), true), gr(gamma.data<double>(), true), br(beta.data<double>(), true);
    attn::layer_norm(xr, {x.size(-1)}, gr, br, eps).backward(r);
    std::string shapes = shapes_str({{"x", x.shape()}, {"gamma", gamma.shape()}}) + ", eps " + num_str(eps);
    expect_close("the gradient of x", xr.grad().data<double>(), xl.grad(), shapes, rtol, atol);
    expect_close("the gradient of gamma", gr.grad().data<double>(), gl.grad(), shapes, rtol, atol);
    expect_close("the gradient of beta", br.grad().data<double>(), bl.grad(), shapes, rtol, atol);
  };
  grader.check("backward: a large eps (0.5) vs attn::layer_norm's gradients", hint::backward, [&] {
    Tensor x = ref.tensor("big_eps", "x"), gamma = ref.tensor("big_eps", "gamma"), beta = ref.tensor("big_eps", "beta");
    Random rng(2300);
    Tensor r(rng.array(x.shape()));
    try {
      expect_backward(x, x, gamma, beta, r, 0.5, 1e-8, 1e-10);
    } catch (const Mismatch& m) {
      no_eps(m, x, gamma, beta, r, 0.5);
      // Named by what the values show: right with eps 1e-5 (every other backward check's), wrong with 0.5.
      try {
        expect_backward(x, x, gamma, beta, r, 1e-5, 1e-8, 1e-10);
      } catch (const Mismatch&) {
        throw m;
      }
      throw Mismatch(m.what() + std::string("; with eps 1e-5 the same inputs give the right gradients"),
                     hint::backward_eps);
    }
  });
  grader.check("backward: a large common offset (x near 1e6) vs the gradients without it", hint::backward, [&] {
    Random rng(2400);
    Shape shape = {4, 5};
    Tensor centered(rng.array(shape, -2.0, 2.0)), gamma(rng.array({5}, 0.5, 1.5)), beta(rng.array({5}));
    Tensor shifted(Array(centered.data<double>() + 1e6));
    centered = Tensor(Array(shifted.data<double>() - 1e6));  // exact: the offset comes off without rounding
    Tensor r(rng.array(shape));
    try {
      expect_backward(shifted, centered, gamma, beta, r, 1e-5, 1e-6, 1e-8);
    } catch (const Mismatch& m) {
      try {
        expect_backward(centered, centered, gamma, beta, r, 1e-5, 1e-6, 1e-8);
      } catch (const Mismatch&) {
        throw m;
      }
      throw Mismatch(m.what() + std::string("; the same x without the offset gives the right gradients"),
                     hint::backward_offset);
    }
  });
  auto random_gradcheck = [&](std::uint64_t seed, std::size_t min_dims, std::size_t max_dims) {
    Random rng(seed);
    for (int trial = 0; trial < 6; ++trial) {
      Shape shape = rng.shape(min_dims, max_dims, 5);
      shape.back() = rng.integer(2, 6);
      std::size_t d = shape.back();
      Tensor x(rng.array(shape, -2.0, 2.0), true), gamma(rng.array({d}, 0.5, 1.5), true), beta(rng.array({d}), true);
      try {
        expect_gradients("layer_norm",
                         [&](const std::vector<Tensor>& in) { return layer_norm_op(ln, in[0], in[1], in[2], 1e-5); },
                         {x, gamma, beta}, {"x", "gamma", "beta"});
      } catch (const Mismatch& m) {
        // The finite differences run the learner's forward: a right backward is blamed for a wrong forward.
        Tensor r(rng.array(shape));
        if (!backward_matches(x, gamma, beta, r, 1e-5, 1e-5)) throw;
        attn::Tensor y;
        {
          attn::no_grad guard;
          y = ln.forward(x, gamma, beta, 1e-5);
        }
        try {
          expect_close("y", attn::layer_norm(x.detach(), {d}, gamma.detach(), beta.detach(), 1e-5).data<double>(), y, "",
                       1e-8, 1e-10);
        } catch (const std::exception&) {
          throw Mismatch(m.what() + std::string("; your backward gives attn::layer_norm's gradients at these inputs"),
                         hint::forward_first);
        }
        throw;
      }
    }
  };
  grader.check("backward: gradcheck, random 1-D and 2-D shapes", hint::backward, [&] { random_gradcheck(2100, 1, 2); });
  grader.check("backward: gradcheck, random 3-D and 4-D shapes", hint::backward, [&] { random_gradcheck(2200, 3, 4); });
  return grader.finish();
}

}  // namespace layer_norm
}  // namespace lab
