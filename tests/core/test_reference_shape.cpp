// Shape and index ops against PyTorch (tools/reference/core_shape.py):
// outputs, and input gradients for the recorded grad_output "gy".
#include "../helpers.hpp"
#include "../reference.hpp"

#include <functional>
#include <map>

using attn::Tensor;

namespace {

const test::Reference& ref() {
  static const test::Reference r("core_shape");
  return r;
}

// Masks are recorded as 0 / 1 floats.
attn::Mask mask(const std::string& case_name, const std::string& name) {
  const xt::xarray<double> a = ref().array(case_name, name);
  attn::Mask m = attn::Mask::from_shape(a.shape());
  for (std::size_t i = 0; i < a.size(); ++i) m.flat(i) = a.flat(i) != 0.0;
  return m;
}

// Runs f on the named inputs of `case_name`, backpropagates gy, compares y and every d<input>.
void check_case(const std::string& case_name, const std::vector<std::string>& names,
                const std::function<Tensor(const std::vector<Tensor>&)>& f) {
  CAPTURE(case_name);
  std::vector<Tensor> inputs;
  for (const auto& name : names) inputs.push_back(ref().tensor(case_name, name, true));
  Tensor y = f(inputs);
  CHECK(test::allclose(y, ref().tensor(case_name, "y"), 1e-12));
  y.backward(ref().tensor(case_name, "gy"));
  for (std::size_t i = 0; i < names.size(); ++i) {
    CAPTURE(names[i]);
    CHECK(test::allclose(inputs[i].grad(), ref().tensor(case_name, "d" + names[i]), 1e-12));
  }
}

}  // namespace

TEST_CASE("shape ops match PyTorch") {
  using In = std::vector<Tensor>;
  check_case("permute", {"x"}, [](const In& in) { return attn::permute(in[0], {2, 0, -2}); });
  check_case("reshape", {"x"}, [](const In& in) { return attn::reshape(in[0], {4, -1}); });
  check_case("expand", {"x"}, [](const In& in) { return attn::expand(in[0], {2, 4, 3}); });
  check_case("concat", {"a", "b", "c"}, [](const In& in) { return attn::concat({in[0], in[1], in[2]}, 1); });
  check_case("stack", {"a", "b", "c"}, [](const In& in) { return attn::stack({in[0], in[1], in[2]}, 1); });
  check_case("narrow", {"x"}, [](const In& in) { return attn::narrow(in[0], 1, 1, 3); });
  check_case("select", {"x"}, [](const In& in) { return attn::select(in[0], 1, -2); });
}

TEST_CASE("index ops match PyTorch") {
  using In = std::vector<Tensor>;
  const attn::Index index = ref().index("index_select", "index");
  check_case("index_select", {"x"}, [&](const In& in) { return attn::index_select(in[0], 0, index); });
  const attn::Index ids = ref().index("embedding", "ids");
  check_case("embedding", {"weight"}, [&](const In& in) { return attn::embedding(in[0], ids); });
  const attn::Mask m = mask("masked_fill", "mask");
  check_case("masked_fill", {"x"}, [&](const In& in) { return attn::masked_fill(in[0], m, -1e4); });
  const attn::Mask cond = mask("where", "cond");
  check_case("where", {"a", "b"}, [&](const In& in) { return attn::where(cond, in[0], in[1]); });
}
