#include "../helpers.hpp"

using attn::Tensor;

namespace {

// A module with parameters, a buffer and a child, written as a learner would.
class Inner : public attn::nn::Module {
 public:
  Inner() : Module("Inner") {
    register_parameter("weight", weight);
    register_buffer("running", running);
  }
  Tensor weight = attn::ones({2, 3});
  Tensor running = attn::zeros({3});
};

class Outer : public attn::nn::Module {
 public:
  Outer() : Module("Outer") {
    register_parameter("scale", scale);
    register_module("inner", inner);
  }
  std::string extra_repr() const override { return "answer=42"; }
  Tensor scale = attn::ones({1});
  Inner inner;
};

}  // namespace

TEST_CASE("parameters are listed with dotted, hierarchical names") {
  Outer m;
  auto named = m.named_parameters();
  REQUIRE(named.size() == 2);
  CHECK(named[0].first == "scale");
  CHECK(named[1].first == "inner.weight");
  CHECK(named[1].second.requires_grad());
  CHECK(m.num_parameters() == 7);
  CHECK(m.named_buffers().size() == 1);
  CHECK(m.named_buffers()[0].first == "inner.running");
  CHECK(m.state().size() == 3);
}

TEST_CASE("zero_grad, train and eval reach every child") {
  Outer m;
  attn::sum(m.inner.weight * m.scale).backward();
  CHECK(m.inner.weight.grad().defined());
  m.zero_grad();
  CHECK_FALSE(m.inner.weight.grad().defined());
  m.eval();
  CHECK_FALSE(m.inner.is_training());
  m.train();
  CHECK(m.inner.is_training());
}

TEST_CASE("to() converts parameters and buffers, which stay trainable") {
  Outer m;
  m.to(attn::Dtype::Float32);
  CHECK(m.dtype() == attn::Dtype::Float32);
  CHECK(m.inner.weight.dtype() == attn::Dtype::Float32);
  CHECK(m.inner.running.dtype() == attn::Dtype::Float32);
  CHECK(m.parameters()[1].requires_grad());
  CHECK(m.parameters()[1].node() == m.inner.weight.node());  // the registry follows the member
}

TEST_CASE("the printout shows the tree with shapes") {
  Outer m;
  const std::string s = m.str();
  CHECK(s.find("Outer(answer=42)") != std::string::npos);
  CHECK(s.find("(inner): Inner()") != std::string::npos);
  CHECK(s.find("weight [2, 3]") != std::string::npos);
  CHECK(s.find("7 parameters") != std::string::npos);
}

TEST_CASE("bad names are rejected") {
  class Bad : public attn::nn::Module {
   public:
    Bad() : Module("Bad") {
      register_parameter("w", w);
      register_parameter("w", w);
    }
    Tensor w = attn::ones({1});
  };
  CHECK_THROWS_AS(Bad(), attn::ValueError);
}
