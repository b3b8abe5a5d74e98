// nn::Conv2d, nn::MaxPool2d, nn::AvgPool2d and nn::BatchNorm2d: PyTorch's names, initialization and
// semantics (batch norm's training and eval modes and running statistics), and a PyTorch
// state_dict of a small conv network loaded and run.
#include "../helpers.hpp"
#include "../reference.hpp"
#include "nn/batch_norm.hpp"
#include "nn/conv2d.hpp"
#include "nn/pool2d.hpp"

#include <cmath>

using attn::Tensor;
using Inputs = std::vector<Tensor>;
namespace nn = attn::nn;

namespace {

std::vector<std::string> buffer_names(const nn::Module& m) {
  std::vector<std::string> out;
  for (const auto& entry : m.named_buffers()) out.push_back(entry.first);
  return out;
}

// tools/reference/core_conv2d.py's Net: conv -> batch norm -> relu -> max pool -> conv -> avg pool.
struct Net : nn::Module {
  Net()
      : Module("Net"), conv1(3, 4, 3, 1, 1), bn1(4), pool1(2), conv2(4, 2, {2, 3}, {1, 2}, {0, 0}, /*bias=*/false),
        pool2(2, 1, 1) {
    register_module("conv1", conv1);
    register_module("bn1", bn1);
    register_module("pool1", pool1);
    register_module("conv2", conv2);
    register_module("pool2", pool2);
  }
  Tensor forward(const Tensor& x) { return pool2(conv2(pool1(attn::relu(bn1(conv1(x)))))); }
  nn::Conv2d conv1;
  nn::BatchNorm2d bn1;
  nn::MaxPool2d pool1;
  nn::Conv2d conv2;
  nn::AvgPool2d pool2;
};

}  // namespace

TEST_CASE("Conv2d: PyTorch's names, shapes and initialization, and the functional conv2d") {
  attn::Generator gen(3);
  nn::Conv2d conv(4, 8, {3, 2}, {2, 1}, {1, 0}, true, gen);
  CHECK(test::parameter_names(conv) == std::vector<std::string>{"weight", "bias"});
  CHECK(conv.weight.shape() == attn::Shape{8, 4, 3, 2});
  CHECK(conv.bias.shape() == attn::Shape{8});
  // kaiming_uniform_(a = sqrt(5)) and the bias: uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)], fan_in = 4*3*2
  const double bound = 1.0 / std::sqrt(24.0);
  for (const Tensor* t : {&conv.weight, &conv.bias}) {
    const xt::xarray<double> v = t->to_array();
    CHECK(xt::amax(xt::abs(v))() <= bound);
  }
  const xt::xarray<double> w = conv.weight.to_array();
  CHECK(xt::amax(w)() > 0.8 * bound);  // spread over the whole range, not a narrower one
  CHECK(xt::amin(w)() < -0.8 * bound);
  CHECK(conv.extra_repr() == "4, 8, kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), bias=true");

  const Tensor x = test::randn({2, 4, 7, 5}, 1, false);
  CHECK(test::allclose(conv(x), attn::conv2d(x, conv.weight, conv.bias, {2, 1}, {1, 0}), 0.0));
  CHECK(conv(x).shape() == attn::Shape{2, 8, 4, 4});
  CHECK_THROWS_WITH_SUBSTR(conv(test::randn({2, 3, 7, 5}, 2, false)), attn::ShapeError,
                           "Conv2d: expected input [N, 4, H, W], got [2, 3, 7, 5]");
  nn::Conv2d no_bias(2, 3, 1, 1, 0, false);
  CHECK(test::parameter_names(no_bias) == std::vector<std::string>{"weight"});
  CHECK_THROWS_WITH_SUBSTR(nn::Conv2d(0, 3, 3), attn::ValueError, "Conv2d: in_channels");
  CHECK_THROWS_WITH_SUBSTR(nn::Conv2d(2, 3, 3, 0), attn::ValueError, "Conv2d: stride must be >= 1, got (0, 0)");
}

TEST_CASE("MaxPool2d and AvgPool2d: the stride defaults to the kernel; bad settings refused when built") {
  const Tensor x = test::randn({1, 2, 6, 6}, 1, false);
  nn::MaxPool2d max(3);
  nn::AvgPool2d avg({2, 3}, attn::Size2{1, 2}, {1, 1});
  CHECK(max.num_parameters() == 0);
  CHECK(max.extra_repr() == "kernel_size=(3, 3), stride=(3, 3), padding=(0, 0)");
  CHECK(test::allclose(max(x), attn::max_pool2d(x, 3, 3), 0.0));
  CHECK(test::allclose(avg(x), attn::avg_pool2d(x, {2, 3}, attn::Size2{1, 2}, {1, 1}), 0.0));
  CHECK_THROWS_WITH_SUBSTR(nn::MaxPool2d(2, 2, 2), attn::ValueError,
                           "MaxPool2d: padding must be at most half the kernel, got kernel_size=(2, 2), stride=(2, 2), padding=(2, 2)");
  CHECK_THROWS_WITH_SUBSTR(nn::AvgPool2d(2, 0), attn::ValueError, "AvgPool2d: kernel_size and stride must be >= 1");
}

TEST_CASE("BatchNorm2d equals torch.nn.BatchNorm2d: two training steps, running statistics, then eval") {
  const test::Reference ref("core_conv2d");
  const std::string c = "batch_norm";
  nn::BatchNorm2d bn(3);
  CHECK(test::parameter_names(bn) == std::vector<std::string>{"weight", "bias"});
  CHECK(buffer_names(bn) == std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"});
  bn.weight.data<double>() = ref.array(c, "weight");
  bn.bias.data<double>() = ref.array(c, "bias");

  // step 1: batch statistics (biased variance) normalize; gradients through them
  Tensor x1 = ref.tensor(c, "x1", true);
  const Tensor y1 = bn(x1);
  CHECK(test::allclose(y1, ref.tensor(c, "y1"), 1e-12));
  attn::sum(y1 * ref.tensor(c, "grad_y1")).backward();
  CHECK(test::allclose(x1.grad(), ref.tensor(c, "grad_x1"), 1e-12));
  CHECK(test::allclose(bn.weight.grad(), ref.tensor(c, "grad_weight"), 1e-12));
  CHECK(test::allclose(bn.bias.grad(), ref.tensor(c, "grad_bias"), 1e-12));
  // running statistics: momentum 0.1, the unbiased variance
  CHECK(test::allclose(bn.running_mean, ref.tensor(c, "running_mean1"), 1e-14));
  CHECK(test::allclose(bn.running_var, ref.tensor(c, "running_var1"), 1e-14));

  // step 2
  const Tensor y2 = bn(ref.tensor(c, "x2"));
  CHECK(test::allclose(y2, ref.tensor(c, "y2"), 1e-12));
  CHECK(test::allclose(bn.running_mean, ref.tensor(c, "running_mean2"), 1e-14));
  CHECK(test::allclose(bn.running_var, ref.tensor(c, "running_var2"), 1e-14));
  CHECK(bn.num_batches_tracked.item() == ref.tensor(c, "num_batches_tracked").item());
  CHECK(bn.num_batches_tracked.item() == 2.0);

  // eval: the running statistics normalize, and stay as they are
  bn.eval();
  const Tensor mean_before = bn.running_mean.detach(), var_before = bn.running_var.detach();
  const Tensor y3 = bn(ref.tensor(c, "x3"));
  CHECK(test::allclose(y3, ref.tensor(c, "y3"), 1e-12));
  CHECK(test::allclose(bn.running_mean, mean_before, 0.0));
  CHECK(test::allclose(bn.running_var, var_before, 0.0));
  CHECK(bn.num_batches_tracked.item() == 2.0);
}

TEST_CASE("BatchNorm2d gradcheck in double, training and eval; bad inputs refused") {
  nn::BatchNorm2d bn(2);
  bn.weight.data<double>() = xt::xarray<double>{1.5, -0.5};
  bn.bias.data<double>() = xt::xarray<double>{0.25, 1.0};
  const Tensor x = test::randn({3, 2, 2, 3}, 1);
  for (bool training : {true, false}) {
    CAPTURE(training);
    bn.train(training);
    CHECK_GRADCHECK([&](const Inputs& in) { return bn(in[0]); }, test::with_parameters(bn, {x}));
  }
  bn.train();
  CHECK_THROWS_WITH_SUBSTR(bn(test::randn({3, 3, 2, 2}, 2, false)), attn::ShapeError,
                           "BatchNorm2d: expected input [N, 2, H, W], got [3, 3, 2, 2]");
  CHECK_THROWS_WITH_SUBSTR(bn(test::randn({1, 2, 1, 1}, 2, false)), attn::ValueError,
                           "BatchNorm2d: expected more than 1 value per channel when training, got input [1, 2, 1, 1]");
  CHECK_THROWS_WITH_SUBSTR(nn::BatchNorm2d(0), attn::ValueError, "BatchNorm2d: num_features");
}

TEST_CASE("a PyTorch conv/batch-norm/pool network's state_dict loads by its keys, and the outputs match") {
  const test::Reference ref("core_conv2d");
  Net net;
  // strict: every key of the file is a key of the module and the other way round, shapes equal
  const attn::io::IncompatibleKeys keys = attn::io::load(net, std::string(ATTN_REFERENCE_DIR) + "/torch_conv2d_net.npz");
  CHECK(keys.missing_keys.empty());
  CHECK(keys.unexpected_keys.empty());
  std::vector<std::string> names;
  for (const auto& entry : net.state()) names.push_back(entry.first);
  CHECK(names == std::vector<std::string>{"conv1.weight", "conv1.bias", "bn1.weight", "bn1.bias", "bn1.running_mean",
                                          "bn1.running_var", "bn1.num_batches_tracked", "conv2.weight"});
  CHECK(net.bn1.num_batches_tracked.item() == ref.tensor("network", "bn1.num_batches_tracked").item());
  CHECK(test::allclose(net.bn1.running_var, ref.tensor("network", "bn1.running_var"), 0.0));
  net.eval();
  CHECK(test::allclose(net.forward(ref.tensor("network", "x")), ref.tensor("network", "y"), 1e-12));
}
