// The checks of lab00_engine.hpp (compiled into libattn_labs, which the notebook kernel loads).
#include "labs/grader/lab00_engine.hpp"

#include "labs/grader/grader.hpp"

namespace lab {
namespace engine {

namespace hint {
inline const char* unbroadcast =
    "sum over the leading axes that broadcasting added, then over every axis where the target shape has "
    "size 1 while g's is larger, keeping that axis (keepdim=true)";
inline const char* misaligned =
    "after the leading axes are summed away, target axis d is axis d of the summed gradient (axis d + added of g): "
    "compare shape[d] with that axis, not with g's axis d, which is a leading one";
inline const char* mul =
    "d(a*b)/da = b and d(a*b)/db = a: each input's gradient is g times the other input, then un-broadcast to "
    "its own shape with unbroadcast()";
inline const char* div =
    "d(a/b)/da = 1/b and d(a/b)/db = -a/b^2: check the sign and the square, then un-broadcast each";
inline const char* exp = "d exp(x)/dx = exp(x) = y: the gradient is g * y";
inline const char* tanh = "d tanh(x)/dx = 1 - tanh(x)^2 = 1 - y^2: square the output y, not the input x";
inline const char* matmul =
    "for Y = A B: dA = G B^T ([n, m] x [m, k]) and dB = A^T G ([k, n] x [n, m]): a missing or extra transpose, "
    "or the two factors in the wrong order";
}  // namespace hint

// The learner's rules wrapped as ops of the graph (forward by the library, backward theirs).
inline Tensor binary_op(const std::string& name, const std::function<Pair(const Tensor&, const Tensor&, const Tensor&)>& rule,
                        const Tensor& a, const Tensor& b, const std::function<Tensor(const Tensor&, const Tensor&)>& forward) {
  Tensor value;
  {
    attn::no_grad guard;
    value = forward(a, b);
  }
  return learner_op(name, value, {a, b}, {"a", "b"},
                    [rule](const std::vector<Tensor>& in, const Tensor&, const Tensor& g) {
                      Pair p = rule(in[0], in[1], g);
                      return std::vector<Tensor>{p.first, p.second};
                    });
}

inline Tensor unary_op(const std::string& name, const std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>& rule,
                       const Tensor& x, const std::function<Tensor(const Tensor&)>& forward) {
  Tensor value;
  {
    attn::no_grad guard;
    value = forward(x);
  }
  return learner_op(name, value, {x}, {"x"}, [rule](const std::vector<Tensor>& in, const Tensor& y, const Tensor& g) {
    return std::vector<Tensor>{rule(in[0], y, g)};
  });
}

// The library's own sum down to a shape (the backward of expand), the reference for unbroadcast.
inline Array library_unbroadcast(const Array& g, const Shape& shape) {
  Tensor x = attn::zeros(shape, attn::Dtype::Float64, true);
  Shape gs(g.shape().begin(), g.shape().end());
  attn::expand(x, gs).backward(Tensor(g));
  return x.grad().data<double>();
}

// A usual mistake: after summing the leading axes, the target's axis d compared with g's
// axis d (a leading axis) instead of the summed gradient's. It differs from the right sum
// only when one of g's leading axes has size 1 (g [1, 4, 3] -> [1, 3]).
inline Array misaligned_unbroadcast(const Array& g, const Shape& shape) {
  std::size_t added = g.dimension() - shape.size();
  Array out = g;
  for (std::size_t d = 0; d < added; ++d) out = xt::sum(out, {0});
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (shape[d] == 1 && g.shape()[d] != 1) out = xt::eval(xt::sum(out, {d}, xt::keep_dims));
  return out;
}

Result grade(const Engine& e, std::ostream& os) {
  Grader grader(0, "the engine: backward rules and un-broadcasting", os);
  Reference ref("lab00_engine");
  using F2 = std::function<Tensor(const Tensor&, const Tensor&)>;
  using F1 = std::function<Tensor(const Tensor&)>;
  F2 mul = [](const Tensor& a, const Tensor& b) { return a * b; };
  F2 div = [](const Tensor& a, const Tensor& b) { return a / b; };
  F2 matmul = [](const Tensor& a, const Tensor& b) { return attn::matmul(a, b); };
  F1 exp = [](const Tensor& x) { return attn::exp(x); };
  F1 tanh = [](const Tensor& x) { return attn::tanh(x); };

  auto check_unbroadcast = [&](const Shape& full, const Shape& target, Random& rng) {
    Array g = rng.array(full);
    Tensor got;
    {
      attn::no_grad guard;
      got = e.unbroadcast(Tensor(g), target);
    }
    try {
      expect_close("unbroadcast(g, " + shape_str(target) + ")", library_unbroadcast(g, target), got,
                   "g " + shape_str(full) + ", shape " + shape_str(target), 1e-12, 1e-12);
    } catch (const Mismatch& m) {
      try {
        expect_close("", misaligned_unbroadcast(g, target), got, "", 1e-12, 1e-12);
      } catch (const Mismatch&) {
        throw m;
      }
      throw Mismatch(m.what() + std::string("; your values are what this mistake gives: the target's axes compared "
                                            "with g's leading axes"),
                     hint::misaligned);
    }
  };

  grader.check("unbroadcast: fixed shapes", hint::unbroadcast, [&] {
    std::vector<std::pair<Shape, Shape>> cases = {
        {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{2, 3}, {2, 1}}, {{2, 3}, {1, 3}}, {{2, 3}, {}},
        {{4, 2, 3}, {2, 1}}, {{3, 1, 4}, {1, 4}}, {{2, 3, 4}, {1, 3, 1}},
        // a size-1 axis among g's leading ones, under a target axis of size 1
        {{1, 4, 3}, {1, 3}}, {{2, 1, 3, 4}, {1, 1, 4}}};
    Random rng(99);
    for (const auto& [full, target] : cases) check_unbroadcast(full, target, rng);
  });
  grader.check("unbroadcast: random shapes", hint::unbroadcast, [&] {
    Random rng(100);
    for (int trial = 0; trial < 20; ++trial) {
      Shape full = rng.shape(1, 4);
      check_unbroadcast(full, rng.broadcast_source(full), rng);
    }
  });

  // Fixed inputs: L = sum(op(inputs) * r), gradients against PyTorch's.
  auto fixed_binary = [&](const std::string& name, const std::string& case_name, const F2& forward,
                          const std::function<Pair(const Tensor&, const Tensor&, const Tensor&)>& rule) {
    Tensor a = ref.tensor(case_name, "a", true), b = ref.tensor(case_name, "b", true);
    std::string shapes = shapes_str({{"a", a.shape()}, {"b", b.shape()}});
    binary_op(name, rule, a, b, forward).backward(ref.tensor(case_name, "r"));
    expect_close(name + ": the gradient of a", ref.array(case_name, "grad_a"), a.grad(), shapes);
    expect_close(name + ": the gradient of b", ref.array(case_name, "grad_b"), b.grad(), shapes);
  };
  auto fixed_unary = [&](const std::string& name, const std::string& case_name, const F1& forward,
                         const std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>& rule) {
    Tensor x = ref.tensor(case_name, "x", true);
    unary_op(name, rule, x, forward).backward(ref.tensor(case_name, "r"));
    expect_close(name + ": the gradient of x", ref.array(case_name, "grad_x"), x.grad(),
                 "x " + shape_str(x.shape()));
  };
  // Random inputs: every gradient against central differences.
  auto random_binary = [&](const std::string& name, const F2& forward,
                           const std::function<Pair(const Tensor&, const Tensor&, const Tensor&)>& rule,
                           std::uint64_t seed, bool denominator) {
    Random rng(seed);
    for (int trial = 0; trial < 8; ++trial) {
      Shape full = rng.shape(1, 3);
      Shape sa = trial % 2 ? rng.broadcast_source(full) : full;
      Shape sb = trial % 2 ? full : rng.broadcast_source(full);
      Tensor a(rng.array(sa, -2.0, 2.0), true);
      Tensor b(denominator ? rng.away_from_zero(sb, 0.5, 2.0) : rng.array(sb, -2.0, 2.0), true);
      expect_gradients(name, [&](const std::vector<Tensor>& in) { return binary_op(name, rule, in[0], in[1], forward); },
                       {a, b}, {"a", "b"});
    }
  };
  auto random_unary = [&](const std::string& name, const F1& forward,
                          const std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>& rule,
                          std::uint64_t seed, double range) {
    Random rng(seed);
    for (int trial = 0; trial < 6; ++trial) {
      Tensor x(rng.array(rng.shape(1, 4), -range, range), true);
      expect_gradients(name, [&](const std::vector<Tensor>& in) { return unary_op(name, rule, in[0], forward); }, {x},
                       {"x"});
    }
  };

  grader.check("mul: gradients vs PyTorch (a [3, 1] * b [4])", hint::mul,
               [&] { fixed_binary("mul_backward", "mul", mul, e.mul_backward); });
  grader.check("mul: gradcheck, random broadcasting shapes", hint::mul,
               [&] { random_binary("mul_backward", mul, e.mul_backward, 200, false); });
  grader.check("div: gradients vs PyTorch (a [2, 3] / b [3])", hint::div,
               [&] { fixed_binary("div_backward", "div", div, e.div_backward); });
  grader.check("div: gradcheck, random broadcasting shapes", hint::div,
               [&] { random_binary("div_backward", div, e.div_backward, 300, true); });
  grader.check("exp: gradients vs PyTorch", hint::exp, [&] { fixed_unary("exp_backward", "exp", exp, e.exp_backward); });
  grader.check("exp: gradcheck, random shapes", hint::exp,
               [&] { random_unary("exp_backward", exp, e.exp_backward, 400, 3.0); });
  grader.check("tanh: gradients vs PyTorch, large magnitudes (x up to 1000)", hint::tanh,
               [&] { fixed_unary("tanh_backward", "tanh", tanh, e.tanh_backward); });
  grader.check("tanh: gradcheck, random shapes", hint::tanh,
               [&] { random_unary("tanh_backward", tanh, e.tanh_backward, 500, 2.0); });
  grader.check("matmul: gradients vs PyTorch (A [3, 4] B [4, 5])", hint::matmul,
               [&] { fixed_binary("matmul_backward", "matmul", matmul, e.matmul_backward); });
  grader.check("matmul: gradients vs PyTorch, square factors (A [3, 3] B [3, 3])", hint::matmul,
               [&] { fixed_binary("matmul_backward", "matmul_square", matmul, e.matmul_backward); });
  grader.check("matmul: gradcheck, random shapes (n, k, m from 1 to 5)", hint::matmul, [&] {
    Random rng(600);
    for (int trial = 0; trial < 6; ++trial) {
      std::size_t n = rng.integer(1, 5), k = rng.integer(1, 5), m = rng.integer(1, 5);
      Tensor a = rng.tensor({n, k}), b = rng.tensor({k, m});
      expect_gradients("matmul_backward",
                       [&](const std::vector<Tensor>& in) { return binary_op("matmul_backward", e.matmul_backward, in[0], in[1], matmul); },
                       {a, b}, {"A", "B"});
    }
  });
  return grader.finish();
}

}  // namespace engine
}  // namespace lab
