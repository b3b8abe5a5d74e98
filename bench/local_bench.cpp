// Per-step cost of Luong attention against the source length S: global attention
// scores all S encoder states at every decoder step, local attention only the
// 2D + 1 in its window, so its cost should stay flat as S grows.
//
//   local_bench [f32|f64]
//
// One decoder step = one query [B, 1, H] against memory [B, S, H] whose keys were
// precomputed once (general's W h_j). Two rows per S: "decode", the forward alone
// under no_grad (greedy or beam decoding), and "train", forward and backward of the
// context with gradients to the query, the keys and the memory. Batch 32, H = 128,
// D = 2 (local-m and local-p, general score); S from 16 to 1024. Median of 200
// steps after 20 warm-up steps, in microseconds per step.
#include "attn.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

using attn::Tensor;
namespace nn = attn::nn;

namespace {

constexpr std::size_t kBatch = 32, kHidden = 128, kRadius = 2;

double median_us(const std::function<void()>& step) {
  for (int i = 0; i < 20; ++i) step();
  std::vector<double> us;
  for (int i = 0; i < 200; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    step();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const attn::Dtype dtype = argc > 1 && std::strcmp(argv[1], "f64") == 0 ? attn::Dtype::Float64 : attn::Dtype::Float32;
  attn::manual_seed(1);
  nn::Attention global(std::make_unique<nn::GeneralScore>(kHidden, kHidden));
  nn::LocalAttention local_m(std::make_unique<nn::GeneralScore>(kHidden, kHidden), kRadius,
                             nn::LocalAttention::Mode::Monotonic);
  nn::LocalAttention local_p(std::make_unique<nn::GeneralScore>(kHidden, kHidden), kRadius,
                             nn::LocalAttention::Mode::Predictive, kHidden, kHidden);
  global.to(dtype);
  local_m.to(dtype);
  local_p.to(dtype);
  std::printf("per decoder step (forward + backward), B = %zu, H = %zu, D = %zu, %s, us (median of 200)\n", kBatch,
              kHidden, kRadius, dtype == attn::Dtype::Float32 ? "f32" : "f64");
  std::printf("%6s %8s %12s %12s %12s\n", "S", "step", "global", "local-m", "local-p");
  for (std::size_t S : {16, 64, 256, 1024}) {
    Tensor memory = attn::randn({kBatch, S, kHidden}, dtype).requires_grad_();
    Tensor query = attn::randn({kBatch, 1, kHidden}, dtype).requires_grad_();
    Tensor keys_g = global.score().precompute_keys(memory).detach().requires_grad_();
    Tensor keys_m = local_m.score().precompute_keys(memory).detach().requires_grad_();
    Tensor keys_p = local_p.score().precompute_keys(memory).detach().requires_grad_();
    const std::size_t t = S / 2;  // a step in the middle of the sentence
    auto g = [&] { return global.forward_precomputed(query, keys_g, memory).context; };
    auto m = [&] { return local_m.forward_precomputed(query, keys_m, memory, std::nullopt, t).context; };
    auto p = [&] { return local_p.forward_precomputed(query, keys_p, memory).context; };
    auto decode = [](const std::function<Tensor()>& f) {
      return median_us([&] {
        attn::no_grad guard;
        f();
      });
    };
    auto train = [](const std::function<Tensor()>& f) { return median_us([&] { attn::sum(f()).backward(); }); };
    std::printf("%6zu %8s %12.1f %12.1f %12.1f\n", S, "decode", decode(g), decode(m), decode(p));
    std::printf("%6zu %8s %12.1f %12.1f %12.1f\n", S, "train", train(g), train(m), train(p));
  }
}
