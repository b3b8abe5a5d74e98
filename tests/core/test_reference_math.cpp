// attn's math ops against PyTorch (tests/reference/core_math.json, written by
// tools/reference/core_math.py): outputs and the gradient of every input for a
// recorded grad_output, in float64, within 1e-12.
#include "../helpers.hpp"
#include "../reference.hpp"

#include <functional>

using attn::Tensor;
using Inputs = std::vector<Tensor>;

namespace {

const double tol = 1e-12;

// Runs `f` on the case's inputs (named in `names`), backpropagates the recorded
// grad_output, and compares y and every grad_<name> with PyTorch's.
void check_case(const test::Reference& ref, const std::string& name, const std::vector<std::string>& names,
                const std::function<Tensor(const Inputs&)>& f) {
  CAPTURE(name);
  Inputs in;
  for (const auto& n : names) in.push_back(ref.tensor(name, n, /*requires_grad=*/true));
  Tensor y = f(in);
  CHECK(test::allclose(y, ref.tensor(name, "y"), tol));
  y.backward(ref.tensor(name, "grad_output"));
  for (std::size_t i = 0; i < names.size(); ++i) {
    CAPTURE(names[i]);
    CHECK(test::allclose(in[i].grad(), ref.tensor(name, "grad_" + names[i]), tol));
  }
}

}  // namespace

TEST_CASE("softmax and log_softmax match PyTorch") {
  test::Reference ref("core_math");
  for (long dim : {0L, 1L, 2L, -1L}) {
    const std::string tag = dim < 0 ? "m" + std::to_string(-dim) : std::to_string(dim);
    check_case(ref, "softmax_dim" + tag, {"x"}, [dim](const Inputs& in) { return attn::softmax(in[0], dim); });
    check_case(ref, "log_softmax_dim" + tag, {"x"}, [dim](const Inputs& in) { return attn::log_softmax(in[0], dim); });
  }
  check_case(ref, "softmax_1d", {"x"}, [](const Inputs& in) { return attn::softmax(in[0], 0); });
}

TEST_CASE("logsumexp and max match PyTorch") {
  test::Reference ref("core_math");
  for (long dim : {1L, -1L})
    for (bool keepdim : {false, true}) {
      const std::string tag = std::string(dim < 0 ? "dimm1" : "dim1") + (keepdim ? "_keepdim" : "");
      check_case(ref, "logsumexp_" + tag, {"x"}, [=](const Inputs& in) { return attn::logsumexp(in[0], dim, keepdim); });
      check_case(ref, "max_" + tag, {"x"}, [=](const Inputs& in) { return attn::max(in[0], dim, keepdim); });
    }
  check_case(ref, "max_all", {"x"}, [](const Inputs& in) { return attn::max(in[0]); });
}

TEST_CASE("sum and mean match PyTorch") {
  test::Reference ref("core_math");
  check_case(ref, "sum_dims02_keepdim", {"x"}, [](const Inputs& in) { return attn::sum(in[0], {0, 2}, true); });
  check_case(ref, "sum_dimm1", {"x"}, [](const Inputs& in) { return attn::sum(in[0], {-1}); });
  check_case(ref, "mean_dim1", {"x"}, [](const Inputs& in) { return attn::mean(in[0], {1}); });
  check_case(ref, "mean_dims01_keepdim", {"x"}, [](const Inputs& in) { return attn::mean(in[0], {0, 1}, true); });
  check_case(ref, "mean_all", {"x"}, [](const Inputs& in) { return attn::mean(in[0]); });
}

TEST_CASE("matmul matches PyTorch: 1-D, folded batch, broadcast batch dims") {
  test::Reference ref("core_math");
  for (const char* name : {"dot", "mat_vec", "vec_mat", "mat_mat", "batch_mat", "batch_vec", "vec_batch",
                           "broadcast", "heads"})
    check_case(ref, std::string("matmul_") + name, {"a", "b"},
               [](const Inputs& in) { return attn::matmul(in[0], in[1]); });
}

TEST_CASE("linear matches PyTorch's F.linear") {
  test::Reference ref("core_math");
  auto with_bias = [](const Inputs& in) { return attn::linear(in[0], in[1], in[2]); };
  check_case(ref, "linear_bias", {"x", "weight", "bias"}, with_bias);
  check_case(ref, "linear_1d", {"x", "weight", "bias"}, with_bias);
  check_case(ref, "linear_nobias", {"x", "weight"}, [](const Inputs& in) { return attn::linear(in[0], in[1]); });
}
