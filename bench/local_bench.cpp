// Per-step cost of Luong attention against the source length S: global attention
// scores all S encoder states at every decoder step, local attention only the
// 2D + 1 in its window, so its cost should stay flat as S grows.
//
//   local_bench [f32|f64] [--hidden=64] [--batch=32] [--radius=2] [--threads=1]
//
// One decoder step = one query [B, 1, H] against memory [B, S, H] whose keys were
// precomputed once (general's W h_j), through forward_precomputed, the call the
// Luong decoder makes. Two rows per S: "decode", the forward alone under no_grad
// (greedy or beam decoding), and "train", forward and backward of the context with
// gradients to the query, the keys and the memory. The keys and the memory are
// leaves whose gradients add up from step to step, as the per-sentence key gradient
// of a decoder does (only the first step of a sentence makes the zero buffer).
// Defaults: batch 32, H = 64 (the chapter's size), D = 2, one thread; S from 16 to
// 1024. Each cell: 20 warm-up steps, then 7 rounds of 100 steps; the median of the
// rounds' mean step time, in microseconds.
#include "attn.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using attn::Tensor;
namespace nn = attn::nn;

namespace {

constexpr int kWarmup = 20, kRounds = 7, kStepsPerRound = 100;

double median_us(const std::function<void()>& step) {
  for (int i = 0; i < kWarmup; ++i) step();
  std::vector<double> rounds;
  for (int r = 0; r < kRounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kStepsPerRound; ++i) step();
    rounds.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
                     kStepsPerRound);
  }
  std::nth_element(rounds.begin(), rounds.begin() + kRounds / 2, rounds.end());
  return rounds[kRounds / 2];
}

// "--name=value" -> value, or fallback when absent.
std::size_t flag(int argc, char** argv, const std::string& name, std::size_t fallback) {
  const std::string prefix = "--" + name + "=";
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) {
      const long v = std::atol(argv[i] + prefix.size());
      if (v < 1) {
        std::fprintf(stderr, "local_bench: expected %s at least 1, got '%s'\n", prefix.c_str(), argv[i]);
        std::exit(2);
      }
      return static_cast<std::size_t>(v);
    }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  attn::Dtype dtype = attn::Dtype::Float32;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "f64") == 0) dtype = attn::Dtype::Float64;
  const std::size_t B = flag(argc, argv, "batch", 32), H = flag(argc, argv, "hidden", 64);
  const std::size_t D = flag(argc, argv, "radius", 2);
  attn::set_num_threads(static_cast<int>(flag(argc, argv, "threads", 1)));

  attn::manual_seed(1);
  nn::Attention global(std::make_unique<nn::GeneralScore>(H, H));
  nn::LocalAttention local_m(std::make_unique<nn::GeneralScore>(H, H), D, nn::LocalAttention::Mode::Monotonic);
  nn::LocalAttention local_p(std::make_unique<nn::GeneralScore>(H, H), D, nn::LocalAttention::Mode::Predictive, H, H);
  global.to(dtype);
  local_m.to(dtype);
  local_p.to(dtype);
  std::printf("one decoder step, B = %zu, H = %zu, D = %zu, %s, threads = %d: us per step "
              "(median of %d rounds of %d steps)\n",
              B, H, D, dtype == attn::Dtype::Float32 ? "f32" : "f64", attn::get_num_threads(), kRounds,
              kStepsPerRound);
  std::printf("%6s %8s %10s %10s %10s\n", "S", "step", "global", "local-m", "local-p");
  std::vector<std::vector<double>> rows;  // per S: decode g, m, p, train g, m, p
  const std::vector<std::size_t> lengths = {16, 64, 256, 1024};
  for (std::size_t S : lengths) {
    Tensor memory = attn::randn({B, S, H}, dtype).requires_grad_();
    Tensor query = attn::randn({B, 1, H}, dtype).requires_grad_();
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
    rows.push_back({decode(g), decode(m), decode(p), train(g), train(m), train(p)});
    const auto& r = rows.back();
    std::printf("%6zu %8s %10.1f %10.1f %10.1f\n", S, "decode", r[0], r[1], r[2]);
    std::printf("%6zu %8s %10.1f %10.1f %10.1f\n", S, "train", r[3], r[4], r[5]);
  }
  // How much a step grows from S = 64 to S = 1024 (1.0: flat).
  const auto& a = rows[1];
  const auto& b = rows[3];
  std::printf("%6s %8s %9.2fx %9.2fx %9.2fx\n", "1024/64", "decode", b[0] / a[0], b[1] / a[1], b[2] / a[2]);
  std::printf("%6s %8s %9.2fx %9.2fx %9.2fx\n", "1024/64", "train", b[3] / a[3], b[4] / a[4], b[5] / a[5]);
}
