#include "../helpers.hpp"

#include <cmath>
#include <functional>
#include <sstream>
#include <thread>

using attn::Tensor;

TEST_CASE("backward of a scalar fills the gradients of the leaves") {
  Tensor x = attn::tensor({1.0, 2.0, 3.0}, true);
  Tensor y = attn::sum(x * x);  // dy/dx = 2x
  y.backward();
  CHECK(test::allclose(x.grad(), attn::tensor({2.0, 4.0, 6.0})));
}

TEST_CASE("a value used twice accumulates both gradients") {
  Tensor x = attn::tensor({3.0}, true);
  Tensor y = attn::sum(x * 2.0 + x * x);  // dy/dx = 2 + 2x = 8
  y.backward();
  CHECK(x.grad().item() == doctest::Approx(8.0));
}

TEST_CASE("gradients accumulate across backward calls until zero_grad") {
  Tensor x = attn::tensor({1.0, -1.0}, true);
  attn::sum(x * 3.0).backward();
  attn::sum(x * 3.0).backward();
  CHECK(test::allclose(x.grad(), attn::tensor({6.0, 6.0})));
  x.zero_grad();
  CHECK_FALSE(x.grad().defined());
}

TEST_CASE("an unused gradient or scratch array holds no memory; zero_grad then backward starts afresh") {
  // xt::xarray's default constructor allocates one value; empty_array allocates none.
  xt::xarray<double> none = attn::empty_array<double>();
  CHECK(none.size() == 0);
  CHECK(none.data() == nullptr);
  Tensor x = attn::tensor({1.0, -1.0}, true);
  const auto& node = static_cast<const attn::Node<double>&>(*x.node());
  CHECK(node.grad.data() == nullptr);  // a fresh leaf
  attn::sum(x * x).backward();
  x.zero_grad();
  CHECK_FALSE(x.grad().defined());
  CHECK(node.grad.data() == nullptr);  // zero_grad frees it
  attn::sum(x * 3.0).backward();
  CHECK(test::allclose(x.grad(), attn::tensor({3.0, 3.0})));
}

TEST_CASE("backward on a leaf itself adds to its gradient each time") {
  Tensor x = attn::full({}, 2.0, attn::Dtype::Float64, /*requires_grad=*/true);  // a scalar leaf
  x.backward();
  x.backward();
  CHECK(x.grad().item() == 2.0);
  x.backward(attn::full({}, 5.0));
  CHECK(x.grad().item() == 7.0);
}

TEST_CASE("a second backward through a freed graph is a clear error") {
  Tensor x = attn::tensor({1.0, 2.0}, true);
  Tensor y = attn::sum(attn::tanh(x));
  y.backward();
  CHECK_THROWS_WITH_SUBSTR(y.backward(), attn::GraphError, "already freed");
}

TEST_CASE("backward's walk lists, kept per thread, serve graphs of any size, after errors and on several threads") {
  // core/autograd.cpp reuses the topological walk's lists from one backward to the next.
  Tensor x = attn::tensor({0.5, -1.0}, true);
  Tensor small = attn::sum(attn::tanh(x));
  small.backward();
  CHECK_THROWS_AS(small.backward(), attn::GraphError);  // thrown while the walk's order is out
  x.zero_grad();
  Tensor big = x;
  for (int i = 0; i < 200; ++i) big = big * 1.0;  // a longer order than any before on this thread
  attn::sum(big).backward();
  CHECK(test::allclose(x.grad(), attn::tensor({1.0, 1.0}), 0.0));
  x.zero_grad();
  attn::sum(x * 3.0).backward();  // then a short one again
  CHECK(test::allclose(x.grad(), attn::tensor({3.0, 3.0}), 0.0));

  // Two threads, each differentiating its own graphs at the same time.
  std::vector<double> got(2, 0.0);
  auto work = [&](std::size_t t) {
    Tensor w = attn::tensor({1.0 + static_cast<double>(t)}, true);
    for (int i = 0; i < 300; ++i) {
      Tensor y = w;
      for (int j = 0; j <= i % 7; ++j) y = y * 2.0;
      attn::sum(y).backward();  // adds 2^(i % 7 + 1)
    }
    got[t] = w.grad().item();
  };
  std::thread first(work, 0), second(work, 1);
  first.join();
  second.join();
  double expected = 0;
  for (int i = 0; i < 300; ++i) expected += std::pow(2.0, i % 7 + 1);
  CHECK(got[0] == expected);
  CHECK(got[1] == expected);
}

TEST_CASE("retain_graph allows a second backward") {
  Tensor x = attn::tensor({1.0, 2.0}, true);
  Tensor y = attn::sum(attn::tanh(x));
  y.backward(true);
  y.backward();
  Tensor once = attn::tensor({1.0, 2.0}, true);
  attn::sum(attn::tanh(once)).backward();
  CHECK(test::allclose(x.grad(), once.grad() * 2.0));
}

TEST_CASE("backward on a non-scalar needs an explicit gradient") {
  Tensor x = attn::tensor({1.0, 2.0}, true);
  Tensor y = x * 2.0;
  CHECK_THROWS_WITH_SUBSTR(y.backward(), attn::GraphError, "scalar");
  CHECK_THROWS_WITH_SUBSTR(y.backward(attn::tensor({1.0, 2.0, 3.0})), attn::ShapeError, "[2]");
  y.backward(attn::tensor({1.0, 10.0}));
  CHECK(test::allclose(x.grad(), attn::tensor({2.0, 20.0})));
}

TEST_CASE("backward on a tensor that needs no grad is an error") {
  Tensor x = attn::tensor({1.0, 2.0});
  CHECK_THROWS_AS(attn::sum(x).backward(), attn::GraphError);
}

TEST_CASE("no_grad records nothing") {
  Tensor x = attn::tensor({1.0, 2.0}, true);
  Tensor y;
  {
    attn::no_grad guard;
    CHECK_FALSE(attn::is_grad_enabled());
    y = x * 2.0;
  }
  CHECK(attn::is_grad_enabled());
  CHECK_FALSE(y.requires_grad());
  CHECK(y.is_leaf());
}

TEST_CASE("detach cuts the graph; requires_grad_ is for leaves only") {
  Tensor x = attn::tensor({1.0, 2.0}, true);
  Tensor y = x * 2.0;
  CHECK_FALSE(y.detach().requires_grad());
  CHECK_THROWS_AS(y.requires_grad_(false), attn::GraphError);
}

TEST_CASE("retain_grad keeps an intermediate gradient") {
  Tensor x = attn::tensor({1.0, 2.0}, true);
  Tensor h = x * 3.0;
  h.retain_grad();
  Tensor k = x * 4.0;
  attn::sum(h * h + k).backward();
  CHECK(test::allclose(h.grad(), attn::tensor({6.0, 12.0})));  // d(h^2)/dh = 2h
  CHECK_FALSE(k.grad().defined());                             // not kept by default
}

TEST_CASE("ops that reuse their incoming gradient in place leave a retained gradient intact") {
  // relu, dropout and reshape take the gradient with Node::take_grad(): a copy when retain_grad() asked to keep it
  Tensor x = attn::tensor({-1.0, 2.0}, true);
  Tensor h = attn::relu(x);
  h.retain_grad();
  attn::sum(h * 3.0).backward();
  CHECK(test::allclose(h.grad(), attn::tensor({3.0, 3.0}), 0.0));  // not zeroed where x <= 0
  CHECK(test::allclose(x.grad(), attn::tensor({0.0, 3.0}), 0.0));
  Tensor r = attn::reshape(x, {2, 1});
  r.retain_grad();
  x.zero_grad();
  attn::sum(r * 5.0).backward();
  CHECK(r.grad().shape() == attn::Shape{2, 1});  // still its own shape, not reshaped to x's
  CHECK(test::allclose(x.grad(), attn::tensor({5.0, 5.0}), 0.0));
}

TEST_CASE("backward(grad_output) leaves grad_output as it was, whichever op the output came from") {
  // The root borrows grad_output's array for its own backward (core/autograd.cpp);
  // ops that would reuse their gradient in place (take_grad) must copy it then.
  const Tensor x = test::randn({3, 4}, 1), b = test::randn({3, 4}, 2), w = test::randn({4, 4}, 3);
  const Tensor whole_bias = test::randn({3, 4}, 4);
  using Op = std::function<Tensor()>;
  const std::vector<std::pair<const char*, Op>> ops{
      {"add", [&] { return x + b; }},
      {"sub", [&] { return x - b; }},
      {"mul by a scalar", [&] { return x * 3.0; }},
      {"tanh", [&] { return attn::tanh(x); }},
      {"sigmoid", [&] { return attn::sigmoid(x); }},
      {"relu", [&] { return attn::relu(x); }},
      {"softmax", [&] { return attn::softmax(x, 1); }},
      {"log_softmax", [&] { return attn::log_softmax(x, 1); }},
      {"reshape", [&] { return attn::reshape(x, {4, 3}); }},
      {"dropout", [&] { attn::Generator gen(7); return attn::dropout(x, 0.5, true, gen); }},
      {"masked_fill", [&] { return attn::masked_fill(x, attn::Mask({true, false, true, false}), 0.0); }},
      {"matmul", [&] { return attn::matmul(x, w); }},
      {"linear, whole bias", [&] { return attn::linear(x, w, whole_bias); }},
  };
  for (const auto& [name, op] : ops) {
    const std::string op_name = name;
    CAPTURE(op_name);
    for (const Tensor* t : {&x, &b, &w, &whole_bias}) const_cast<Tensor*>(t)->zero_grad();
    Tensor y = op();
    const Tensor g = test::randn(y.shape(), 5, false);
    const Tensor g_before = g.detach();  // a copy of its values
    // Reference: the same backward through a tensor whose gradient is a sum (no borrowing there).
    Tensor y2 = op();
    attn::sum(y2 * g_before).backward();
    const Tensor expected_x = x.grad();
    for (const Tensor* t : {&x, &b, &w, &whole_bias}) const_cast<Tensor*>(t)->zero_grad();
    y.backward(g);
    CHECK(test::allclose(g, g_before, 0.0));
    CHECK(test::allclose(x.grad(), expected_x, 1e-12));
  }
}

TEST_CASE("backward(grad_output) when grad_output is also an input of the output, or the output itself") {
  Tensor x = test::randn({2, 3}, 1);
  Tensor g = test::randn({2, 3}, 2);
  Tensor y = x * g;  // y's backward reads g's values: g cannot lend its array
  y.backward(g);
  CHECK(test::allclose(x.grad(), attn::mul(g, g).detach(), 0.0));   // dy/dx = g, times grad_output g
  CHECK(test::allclose(g.grad(), attn::mul(x, g).detach(), 0.0));   // dy/dg = x, times g
  Tensor z = attn::tanh(x);
  x.zero_grad();
  Tensor z_values = z.detach();
  z.backward(z, true);  // grad_output is the output itself (its values are tanh(x))
  CHECK(test::allclose(z, z_values, 0.0));
  CHECK(test::allclose(x.grad(), (z_values * (1.0 - z_values * z_values)).detach(), 1e-15));
  z.retain_grad();      // the root keeps its gradient: a copy of grad_output, not the array itself
  Tensor g2 = test::randn({2, 3}, 3, false);
  z.backward(g2);
  CHECK(test::allclose(z.grad(), g2, 0.0));
}

TEST_CASE("profiler: counts each op's calls and times, and nothing while disabled") {
  attn::profiler::reset();
  Tensor a = test::randn({4, 3}, 1), b = test::randn({3, 2}, 2);
  attn::sum(attn::matmul(a, b)).backward();  // profiler off: not counted
  attn::profiler::enable();
  for (int i = 0; i < 2; ++i) attn::sum(attn::tanh(attn::matmul(a, b))).backward();
  attn::profiler::enable(false);
  CHECK_FALSE(attn::profiler::enabled());
  const std::string table = attn::profiler::table();
  CAPTURE(table);
  for (const char* op : {"matmul", "tanh", "sum"}) {
    const std::size_t at = table.find(std::string("\n") + op + " ");
    REQUIRE(at != std::string::npos);
    long calls = 0;
    std::istringstream(table.substr(at + 1 + std::string(op).size())) >> calls;
    CHECK(calls == 2);
  }
  CHECK(table.find("total") != std::string::npos);
  std::istringstream per_step(attn::profiler::table(2).substr(attn::profiler::table(2).find("\nmatmul") + 7));
  long calls_per_step = 0;
  per_step >> calls_per_step;
  CHECK(calls_per_step == 1);  // table(per) divides by the number of steps
  attn::profiler::reset();
  CHECK(attn::profiler::table().find("matmul") == std::string::npos);
}

TEST_CASE("the graph frees itself: the live-node counter returns to where it was") {
  const long before = attn::NodeBase::live_count();
  {
    Tensor w = attn::tensor({{0.5, -0.2}, {0.1, 0.3}}, true);
    Tensor h = attn::tensor({1.0, 1.0});
    for (int t = 0; t < 50; ++t) h = attn::tanh(h * w + 0.1);
    Tensor loss = attn::sum(h);
    CHECK(attn::NodeBase::live_count() > before + 50);
    loss.backward();
    CHECK(w.grad().defined());
  }
  CHECK(attn::NodeBase::live_count() == before);
}

TEST_CASE("a graph that is never differentiated frees itself too") {
  const long before = attn::NodeBase::live_count();
  {
    Tensor x = attn::tensor({1.0, 2.0}, true);
    Tensor y = attn::exp(x) * x;
    y = attn::sum(y / (y + 1.0));
  }
  CHECK(attn::NodeBase::live_count() == before);
}

TEST_CASE("a 10,000-step chain goes backward and is freed without a stack overflow") {
  const long before = attn::NodeBase::live_count();
  {
    Tensor x = attn::tensor({0.5}, true);
    Tensor h = x;
    for (int t = 0; t < 10000; ++t) h = h * 1.0001 + 0.0;  // an RNN-like loop
    attn::sum(h).backward();
    CHECK(x.grad().item() == doctest::Approx(std::pow(1.0001, 10000)));
  }
  {
    Tensor x = attn::tensor({0.5}, true);
    Tensor h = x;
    for (int t = 0; t < 10000; ++t) h = attn::tanh(h);
    // dropped without backward: the destructor chain must not recurse
  }
  CHECK(attn::NodeBase::live_count() == before);
}

TEST_CASE("float32 tensors record and differentiate too") {
  Tensor x = attn::tensor({1.0, 2.0}, true, attn::Dtype::Float32);
  CHECK(x.dtype() == attn::Dtype::Float32);
  attn::sum(x * x).backward();
  CHECK(x.grad().dtype() == attn::Dtype::Float32);
  CHECK(x.grad().to_array()(1) == doctest::Approx(4.0));
}

TEST_CASE("to() casts and differentiates back into the source dtype") {
  Tensor x = attn::tensor({1.0, 2.0}, true);
  Tensor y = x.to(attn::Dtype::Float32);
  CHECK(y.dtype() == attn::Dtype::Float32);
  attn::sum(y * y).to(attn::Dtype::Float64).backward();
  CHECK(x.grad().dtype() == attn::Dtype::Float64);
  CHECK(test::allclose(x.grad(), attn::tensor({2.0, 4.0})));
}

TEST_CASE("mixing dtypes is a clear error") {
  Tensor a = attn::tensor({1.0}), b = attn::tensor({1.0}, false, attn::Dtype::Float32);
  CHECK_THROWS_WITH_SUBSTR(a + b, attn::ValueError, "float64 and float32");
}

TEST_CASE("gradcheck finds a wrong gradient and reports where") {
  Tensor x = test::randn({2, 3}, 1);
  auto report = attn::gradcheck([](const std::vector<Tensor>& in) { return in[0] * in[0]; }, {x});
  CHECK(report.ok);
  CHECK(report.inputs.size() == 1);
  CHECK(report.inputs[0].max_abs_error < 1e-8);
  CHECK_THROWS_AS(attn::gradcheck([](const std::vector<Tensor>& in) { return in[0]; },
                                  {test::randn({2}, 1).to(attn::Dtype::Float32).detach().requires_grad_()}),
                  attn::ValueError);
}
