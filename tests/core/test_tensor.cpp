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

TEST_CASE("factories take requires_grad second, as PyTorch's, and the same draws as the dtype form") {
  using attn::Dtype;
  attn::manual_seed(7);
  Tensor plain = attn::randn({3, 4});
  attn::manual_seed(7);
  Tensor a = attn::randn({3, 4}, /*requires_grad=*/true);
  CHECK(a.requires_grad());
  CHECK(a.is_leaf());
  CHECK(a.dtype() == Dtype::Float64);
  CHECK(test::allclose(a, plain, 0.0));  // same seed, same values

  attn::Generator g1(11), g2(11), g3(11);
  Tensor f = attn::randn({5}, Dtype::Float32, g1);
  Tensor fg = attn::randn({5}, Dtype::Float32, /*requires_grad=*/true, g2);
  Tensor gf = attn::randn({5}, /*requires_grad=*/true, Dtype::Float32, g3);
  CHECK(!f.requires_grad());
  CHECK(fg.requires_grad());
  CHECK(gf.requires_grad());
  CHECK(fg.dtype() == Dtype::Float32);
  CHECK(gf.dtype() == Dtype::Float32);
  CHECK(test::allclose(fg, f, 0.0));
  CHECK(test::allclose(gf, f, 0.0));

  attn::Generator u1(3), u2(3);
  Tensor r = attn::rand({4}, Dtype::Float64, u1);
  Tensor rg = attn::rand({4}, true, Dtype::Float64, u2);
  CHECK(rg.requires_grad());
  CHECK(test::allclose(rg, r, 0.0));
  CHECK(!attn::rand({4}, false).requires_grad());

  Tensor z = attn::zeros({2}, Dtype::Float64, true);
  CHECK(z.requires_grad());
  CHECK(z.to_array() == xt::xarray<double>({0.0, 0.0}));
  Tensor o = attn::ones({2, 2}, true);
  CHECK(o.requires_grad());
  CHECK(o.dtype() == Dtype::Float64);
  CHECK(attn::sum(o).item() == 4.0);
  CHECK(attn::zeros({2}, true, Dtype::Float32).dtype() == Dtype::Float32);
  Tensor h = attn::full({3}, 0.5, true);
  CHECK(h.requires_grad());
  CHECK(h.to_array()(2) == 0.5);
  CHECK(!attn::zeros({2}, Dtype::Float32).requires_grad());
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
