#include "../helpers.hpp"

#include <sstream>

using attn::Tensor;

TEST_CASE("factories make the shapes and values asked for") {
  Tensor z = attn::zeros({2, 3});
  CHECK(z.shape() == attn::Shape{2, 3});
  CHECK(z.numel() == 6);
  CHECK(z.dim() == 2);
  CHECK(z.size(-1) == 3);
  CHECK(attn::sum(attn::ones({4, 5})).item() == 20.0);
  CHECK(attn::full({2}, 7.0).to_array()(1) == 7.0);
  CHECK(attn::arange(4).to_array()(3) == 3.0);
  CHECK(attn::zeros({2}, attn::Dtype::Float32).dtype() == attn::Dtype::Float32);
}

TEST_CASE("random tensors are reproducible from a seed") {
  attn::manual_seed(42);
  Tensor a = attn::randn({3, 3});
  attn::manual_seed(42);
  Tensor b = attn::randn({3, 3});
  CHECK(test::allclose(a, b, 0.0));
  Tensor u = attn::uniform({1000}, -2.0, 2.0);
  CHECK(xt::amax(xt::abs(u.to_array()))() <= 2.0);
}

TEST_CASE("item and size check their arguments") {
  CHECK_THROWS_WITH_SUBSTR(attn::zeros({2, 2}).item(), attn::ShapeError, "[2, 2]");
  CHECK_THROWS_WITH_SUBSTR(attn::zeros({2, 2}).size(2), attn::ShapeError, "out of range");
  CHECK_THROWS_AS(Tensor().shape(), attn::ValueError);
  CHECK_THROWS_AS(attn::zeros({2}).data<float>(), attn::ValueError);
}

TEST_CASE("printing shows values, shape and how a tensor was made") {
  Tensor x = attn::tensor({1.0, 2.0}, true);
  std::ostringstream os;
  os << x * 2.0;
  CHECK(os.str().find("requires_grad=true") != std::string::npos);
  CHECK(os.str().find("op=mul") != std::string::npos);
  CHECK(os.str().find("[2]") != std::string::npos);
}

TEST_CASE("reuse_freed_memory takes effect where malloc is glibc's") {
#if defined(__SANITIZE_ADDRESS__)
  CHECK_FALSE(attn::reuse_freed_memory());  // AddressSanitizer's malloc ignores mallopt
#elif defined(__GLIBC__)
  CHECK(attn::reuse_freed_memory());
#else
  CHECK_FALSE(attn::reuse_freed_memory());
#endif
}
