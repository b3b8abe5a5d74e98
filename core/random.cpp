#include "random.hpp"

namespace attn {

double Generator::uniform(double low, double high) {
  return std::uniform_real_distribution<double>(low, high)(engine_);
}
double Generator::normal(double mean, double stddev) {
  return std::normal_distribution<double>(mean, stddev)(engine_);
}
std::int64_t Generator::randint(std::int64_t low, std::int64_t high) {
  if (high <= low) throw ValueError("randint: expected low < high, got " + std::to_string(low) + " and " + std::to_string(high));
  return std::uniform_int_distribution<std::int64_t>(low, high - 1)(engine_);
}

Generator& default_generator() {
  static Generator gen(0);
  return gen;
}
void manual_seed(std::uint64_t seed) { default_generator().manual_seed(seed); }

namespace {
template <class Draw>
Tensor fill(const Shape& shape, Dtype dtype, Draw draw) {
  xt::xarray<double> values = xt::xarray<double>::from_shape(shape);
  for (auto& v : values) v = draw();
  return tensor(values, false, dtype);
}
}  // namespace

Tensor rand(const Shape& shape, Dtype dtype, Generator& gen) { return uniform(shape, 0.0, 1.0, dtype, gen); }
Tensor randn(const Shape& shape, Dtype dtype, Generator& gen) {
  return fill(shape, dtype, [&] { return gen.normal(); });
}
Tensor rand(const Shape& shape, bool requires_grad, Dtype dtype, Generator& gen) {
  return rand(shape, dtype, requires_grad, gen);
}
Tensor randn(const Shape& shape, bool requires_grad, Dtype dtype, Generator& gen) {
  return randn(shape, dtype, requires_grad, gen);
}
Tensor rand(const Shape& shape, Dtype dtype, bool requires_grad, Generator& gen) {
  Tensor t = rand(shape, dtype, gen);
  return t.requires_grad_(requires_grad);
}
Tensor randn(const Shape& shape, Dtype dtype, bool requires_grad, Generator& gen) {
  Tensor t = randn(shape, dtype, gen);
  return t.requires_grad_(requires_grad);
}
Tensor uniform(const Shape& shape, double low, double high, Dtype dtype, Generator& gen) {
  return fill(shape, dtype, [&] { return gen.uniform(low, high); });
}

}  // namespace attn
