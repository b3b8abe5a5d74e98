// Seeded random numbers. attn::manual_seed(n) makes a whole run (initial
// weights, dropout masks, data) reproducible bit for bit.
#pragma once

#include "tensor.hpp"

#include <cstdint>
#include <random>

namespace attn {

class Generator {
 public:
  explicit Generator(std::uint64_t seed = 0) : engine_(seed) {}
  void manual_seed(std::uint64_t seed) { engine_.seed(seed); }
  std::mt19937_64& engine() { return engine_; }
  double uniform(double low = 0.0, double high = 1.0);  // [low, high)
  double normal(double mean = 0.0, double stddev = 1.0);
  std::int64_t randint(std::int64_t low, std::int64_t high);  // [low, high)

 private:
  std::mt19937_64 engine_;
};

Generator& default_generator();
void manual_seed(std::uint64_t seed);  // seeds default_generator()

Tensor rand(const Shape& shape, Dtype dtype = Dtype::Float64, Generator& gen = default_generator());
Tensor randn(const Shape& shape, Dtype dtype = Dtype::Float64, Generator& gen = default_generator());
// With requires_grad, as PyTorch's torch.randn(3, 4, requires_grad=True):
//   attn::randn({3, 4}, /*requires_grad=*/true)
//   attn::randn({3, 4}, Dtype::Float32, /*requires_grad=*/true, gen)
// The values are those of the same call without it (same generator, same draws).
Tensor rand(const Shape& shape, bool requires_grad, Dtype dtype = Dtype::Float64,
            Generator& gen = default_generator());
Tensor randn(const Shape& shape, bool requires_grad, Dtype dtype = Dtype::Float64,
             Generator& gen = default_generator());
Tensor rand(const Shape& shape, Dtype dtype, bool requires_grad, Generator& gen = default_generator());
Tensor randn(const Shape& shape, Dtype dtype, bool requires_grad, Generator& gen = default_generator());
Tensor uniform(const Shape& shape, double low, double high, Dtype dtype = Dtype::Float64,
               Generator& gen = default_generator());

}  // namespace attn
