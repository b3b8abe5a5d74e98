// to_dot and to_svg: the graph drawn by Graphviz (core/dot.cpp).
#include "../helpers.hpp"

#include <cstdlib>

using attn::Tensor;

namespace {
std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("to_dot: ops, shapes, values and gradients of a small graph") {
  Tensor x = attn::tensor({1.0, -2.0}, true);
  Tensor w = attn::tensor({{0.5, 0.25}, {1.0, 2.0}, {3.0, 4.0}}, true);
  Tensor h = attn::tanh(x);
  h.retain_grad();
  Tensor y = attn::sum(w * h);  // [3, 2] * [2]
  y.backward(true);

  const std::string dot = attn::to_dot(y);
  INFO(dot);
  CHECK(dot.rfind("digraph", 0) == 0);
  CHECK(dot.find("rankdir=LR") != std::string::npos);
  CHECK(count(dot, "[label=") == 5);  // y, mul, w, tanh, x
  CHECK(count(dot, " -> ") == 4);
  CHECK(dot.find("{ sum | [] | value -2.598 }") != std::string::npos);  // backward dropped its gradient
  CHECK(dot.find("{ mul | [3, 2] | value [[0.3808, -0.241], [0.7616, -1.928], [2.285, -3.856]] }") !=
        std::string::npos);
  CHECK(dot.find("{ tanh | [2] | value [0.7616, -0.964] | grad [4.5, 6.25] }") != std::string::npos);  // retained
  CHECK(dot.find("{ leaf | [2] | value [1, -2] | grad ") != std::string::npos);
  CHECK(dot.find("fillcolor=lightblue") != std::string::npos);
}

TEST_CASE("to_dot: big tensors show only op and shape; each node once") {
  Tensor x = test::randn({3, 4}, 1);
  Tensor y = attn::sum(x * x + x);
  const std::string dot = attn::to_dot(y);
  INFO(dot);
  CHECK(dot.find("{ leaf | [3, 4] }") != std::string::npos);
  CHECK(count(dot, "{ leaf") == 1);  // x appears once, with three edges out of it
  CHECK(count(dot, "[label=") == 4);
  CHECK(count(dot, " -> ") == 5);
}

TEST_CASE("to_dot: a long chain is walked without recursion") {
  Tensor x = attn::tensor({1.0}, true);
  Tensor y = x;
  for (int i = 0; i < 20000; ++i) y = y * 1.0;
  const std::string dot = attn::to_dot(y);
  CHECK(count(dot, " -> ") == 20000);
}

TEST_CASE("to_svg: Graphviz renders the graph, or a clear IOError without it") {
  Tensor x = attn::tensor({1.0, 2.0}, true);
  Tensor y = attn::sum(attn::exp(x));
  const std::string svg = attn::to_svg(y);
  CHECK((svg.rfind("<?xml", 0) == 0 || svg.find("<svg") != std::string::npos));
  CHECK(svg.find("exp") != std::string::npos);

  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  setenv("PATH", "/nonexistent-attn-test", 1);
  CHECK_THROWS_WITH_SUBSTR(attn::to_svg(y), attn::IOError, "to_svg: the Graphviz program 'dot' was not found");
  setenv("PATH", saved.c_str(), 1);
  CHECK_THROWS_AS(attn::to_dot(Tensor()), attn::ValueError);
}
