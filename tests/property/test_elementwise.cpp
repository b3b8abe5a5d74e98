// Properties of the elementwise ops (core/ops/elementwise.cpp) and the cast: every op
// against std:: functions elementwise, over random shapes (rank 0 to 4), broadcasting
// across random compatible shapes, float32 against float64, and gradcheck in float64.
#include "property.hpp"

using namespace prop;

namespace {

struct Unary {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> reference;
  double low, high;  // the domain values are drawn from (uniform), or 0, 0 for normal values away from 0
};

const std::vector<Unary>& unary_ops() {
  static const std::vector<Unary> ops = {
      {"neg", [](const Tensor& x) { return attn::neg(x); }, [](double x) { return -x; }, 0, 0},
      {"exp", [](const Tensor& x) { return attn::exp(x); }, [](double x) { return std::exp(x); }, 0, 0},
      {"log", [](const Tensor& x) { return attn::log(x); }, [](double x) { return std::log(x); }, 0.1, 3},
      {"sqrt", [](const Tensor& x) { return attn::sqrt(x); }, [](double x) { return std::sqrt(x); }, 0.1, 3},
      {"abs", [](const Tensor& x) { return attn::abs(x); }, [](double x) { return std::abs(x); }, 0, 0},
      {"tanh", [](const Tensor& x) { return attn::tanh(x); }, [](double x) { return std::tanh(x); }, 0, 0},
      {"sigmoid", [](const Tensor& x) { return attn::sigmoid(x); }, [](double x) { return 1 / (1 + std::exp(-x)); },
       0, 0},
      {"relu", [](const Tensor& x) { return attn::relu(x); }, [](double x) { return x > 0 ? x : 0.0; }, 0, 0},
      {"gelu", [](const Tensor& x) { return attn::gelu(x); },
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, 0, 0},
      {"pow 3", [](const Tensor& x) { return attn::pow(x, 3.0); }, [](double x) { return x * x * x; }, 0, 0},
      {"pow -1.5", [](const Tensor& x) { return attn::pow(x, -1.5); }, [](double x) { return std::pow(x, -1.5); },
       0.2, 3},
      {"pow 0.5", [](const Tensor& x) { return attn::pow(x, 0.5); }, [](double x) { return std::sqrt(x); }, 0.1, 3},
      {"add 2.5", [](const Tensor& x) { return attn::add(x, 2.5); }, [](double x) { return x + 2.5; }, 0, 0},
      {"mul -1.5", [](const Tensor& x) { return attn::mul(x, -1.5); }, [](double x) { return -1.5 * x; }, 0, 0},
      {"2 - x", [](const Tensor& x) { return 2.0 - x; }, [](double x) { return 2 - x; }, 0, 0},
      {"2 / x", [](const Tensor& x) { return 2.0 / x; }, [](double x) { return 2 / x; }, 0, 0},
  };
  return ops;
}

struct Binary {
  const char* name;
  std::function<Tensor(const Tensor&, const Tensor&)> op;
  std::function<double(double, double)> reference;
};

const std::vector<Binary>& binary_ops() {
  static const std::vector<Binary> ops = {
      {"add", [](const Tensor& a, const Tensor& b) { return attn::add(a, b); }, [](double a, double b) { return a + b; }},
      {"sub", [](const Tensor& a, const Tensor& b) { return attn::sub(a, b); }, [](double a, double b) { return a - b; }},
      {"mul", [](const Tensor& a, const Tensor& b) { return attn::mul(a, b); }, [](double a, double b) { return a * b; }},
      {"div", [](const Tensor& a, const Tensor& b) { return attn::div(a, b); }, [](double a, double b) { return a / b; }},
  };
  return ops;
}

Tensor values_for(const Unary& u, const Shape& s, std::uint64_t seed) {
  return u.low == u.high ? away_from_zero(s, seed) : test::uniform(s, u.low, u.high, seed);
}

}  // namespace

TEST_CASE("unary ops: forward equals std:: elementwise, gradients equal central differences, float32 follows") {
  for (const Unary& u : unary_ops()) {
    CAPTURE(u.name);
    PROPERTY(std::string("unary ") + u.name, [&u] {
      const Shape s = shape(0, 4);
      const Tensor x = values_for(u, s, seed());
      const Tensor y = u.op(x);
      Array expected = x.to_array();
      for (double& v : expected) v = u.reference(v);
      assert_close(u.name, y, expected, 1e-12, 1e-14);
      assert_gradcheck(u.name, [&u](const Inputs& in) { return u.op(in[0]); }, {x});
      assert_float32_matches(u.name, [&u](const Inputs& in) { return u.op(in[0]); }, {x}, 1e-4, 1e-5);
    });
  }
}

TEST_CASE("binary ops broadcast over random compatible shapes: values, gradients (un-broadcast), float32") {
  for (const Binary& b : binary_ops()) {
    CAPTURE(b.name);
    PROPERTY(std::string("binary ") + b.name, [&b] {
      const Shape out = shape(0, 4);
      Shape sa = broadcastable_to(out), sb = broadcastable_to(out);
      if (*rc::gen::arbitrary<bool>()) std::swap(sa, sb);
      const Tensor x = randn(sa, seed()), y = away_from_zero(sb, seed());
      const Shape full = broadcast(sa, sb);
      Array expected = xt::zeros<double>(full);
      const Array xa = x.to_array(), ya = y.to_array();
      for (std::size_t i = 0; i < expected.size(); ++i) {
        const Shape index = unravel(i, full);
        expected.flat(i) = b.reference(at_broadcast(xa, sa, index), at_broadcast(ya, sb, index));
      }
      assert_close(b.name, b.op(x, y), expected, 1e-12, 1e-14);
      assert_gradcheck(b.name, [&b](const Inputs& in) { return b.op(in[0], in[1]); }, {x, y});
      assert_float32_matches(b.name, [&b](const Inputs& in) { return b.op(in[0], in[1]); }, {x, y}, 1e-4, 1e-5);
    });
  }
}

TEST_CASE("the same tensor on both sides of a binary op: both gradients accumulate") {
  PROPERTY("x * x and x / x", [] {
    const Tensor x = away_from_zero(shape(0, 3), seed());
    assert_gradcheck("x * x", [](const Inputs& in) { return attn::mul(in[0], in[0]); }, {x});
    assert_gradcheck("x - x * x / x", [](const Inputs& in) { return in[0] - in[0] * in[0] / in[0]; }, {x});
  });
}

TEST_CASE("to(): a float32 round trip keeps the values and differentiates back") {
  PROPERTY("cast", [] {
    const Tensor x = randn(shape(0, 4), seed());
    const Tensor y = x.to(Dtype::Float32);
    RC_ASSERT(y.dtype() == Dtype::Float32);
    assert_close("to(float32)", y, x.to_array(), 1e-7, 1e-7);
    // Central differences cannot see through float32 rounding: the gradient is checked as
    // d sum(r * to(x)) / dx = r, in float64.
    const Tensor r = randn(x.shape(), seed(), false);
    attn::sum(attn::mul(y, r.to(Dtype::Float32))).to(Dtype::Float64).backward();
    RC_ASSERT(x.grad().dtype() == Dtype::Float64);
    assert_close("grad of to(float32)", x.grad(), r.to(Dtype::Float32).to_array(), 0, 0);
  });
}

TEST_CASE("large tensors: the threaded kernels equal the loops, and their gradients the one-thread run") {
  // Tens of thousands of values, so the elementwise kernels split the work over threads
  // (core/backend/parallel.hpp) and run their SIMD bodies; gradcheck would be too slow here,
  // so the gradients are compared with the same op on one thread.
  const int threads = attn::get_num_threads();
  PROPERTY("large unary and binary ops", [] {
    const Unary& u = unary_ops()[*rc::gen::inRange<std::size_t>(0, unary_ops().size())];
    const Binary& b = binary_ops()[*rc::gen::inRange<std::size_t>(0, binary_ops().size())];
    const Shape out{*rc::gen::inRange<std::size_t>(60, 200), *rc::gen::inRange<std::size_t>(200, 400)};
    const Shape sb = broadcastable_to(out);
    const Dtype dtype = *rc::gen::arbitrary<bool>() ? Dtype::Float32 : Dtype::Float64;
    Tensor x = values_for(u, out, seed()).detach().to(dtype).requires_grad_();
    Tensor y = away_from_zero(sb, seed()).detach().to(dtype).requires_grad_();
    const auto f = [&u, &b](const Tensor& p, const Tensor& q) { return b.op(u.op(p), q); };
    Array expected = xt::zeros<double>(out);
    const Array xa = x.to_array(), ya = y.to_array();
    for (std::size_t i = 0; i < expected.size(); ++i)
      expected.flat(i) = b.reference(u.reference(xa.flat(i)), at_broadcast(ya, sb, unravel(i, out)));
    const Tensor r = randn(out, seed(), false).to(dtype);
    std::vector<Array> grads;
    for (int n : {2, 1}) {
      attn::set_num_threads(n);
      x.zero_grad(), y.zero_grad();
      const Tensor z = f(x, y);
      assert_close(std::string(u.name) + " then " + b.name + " on " + std::to_string(n) + " threads", z, expected,
                   dtype == Dtype::Float32 ? 1e-5 : 1e-12, dtype == Dtype::Float32 ? 1e-5 : 1e-13);
      attn::sum(attn::mul(z, r)).backward();
      grads.push_back(x.grad().to_array());
      grads.push_back(y.grad().to_array());
    }
    RC_ASSERT(close(grads[0], grads[2], 1e-12, 1e-12));
    RC_ASSERT(close(grads[1], grads[3], dtype == Dtype::Float32 ? 1e-4 : 1e-10, 1e-10));  // a sum: summation order
  });
  attn::set_num_threads(threads);
}
