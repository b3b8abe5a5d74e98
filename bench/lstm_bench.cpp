// LSTM forward + backward in attn, timed for bench/run_lstm.sh.
//
// The work: nn::LSTM(128, 128, batch_first) over x [32, 20, 128] (batch 32,
// length 20, input 128), then backward from a fixed grad_output [32, 20, 128],
// with gradients for x and every weight; float32 and float64.
//
//   lstm_bench            times both dtypes alone (warm-up, then the median of 30 runs)
//   lstm_bench --serve    for bench/torch_lstm.py, which alternates with PyTorch: reads
//                         lines "f32 N" / "f64 N", answers one line of N times in us
//
// OpenBLAS runs one thread (ATTN_BLAS_THREADS to change it).
#include "attn.hpp"
#include "core/blas.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

using attn::Tensor;

namespace {

constexpr std::size_t kBatch = 32, kSteps = 20, kInput = 128, kHidden = 128;

struct Workload {
  explicit Workload(attn::Dtype dtype) {
    attn::manual_seed(0);
    attn::nn::RNNOptions opt;
    opt.batch_first = true;
    lstm = std::make_unique<attn::nn::LSTM>(kInput, kHidden, opt);
    lstm->to(dtype);
    attn::Generator gen(1);
    x = attn::randn({kBatch, kSteps, kInput}, dtype, gen).requires_grad_(true);
    grad_output = attn::randn({kBatch, kSteps, kHidden}, dtype, gen);
  }

  // One forward + backward; returns its time in microseconds.
  double run() {
    const auto start = std::chrono::steady_clock::now();
    attn::nn::LSTMOutput r = (*lstm)(x);
    r.output.backward(grad_output);
    const auto end = std::chrono::steady_clock::now();
    lstm->zero_grad();
    x.zero_grad();
    return std::chrono::duration<double, std::micro>(end - start).count();
  }

  std::unique_ptr<attn::nn::LSTM> lstm;
  Tensor x, grad_output;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const char* threads = std::getenv("ATTN_BLAS_THREADS");
  attn::blas::set_num_threads(threads ? std::atoi(threads) : 1);
  Workload f32(attn::Dtype::Float32), f64(attn::Dtype::Float64);

  if (argc > 1 && std::string(argv[1]) == "--serve") {
    std::string dtype;
    int n = 0;
    while (std::cin >> dtype >> n) {
      Workload& w = dtype == "f32" ? f32 : f64;
      for (int i = 0; i < n; ++i) std::cout << (i ? " " : "") << w.run();
      std::cout << std::endl;
    }
    return 0;
  }

  for (auto [name, w] : {std::pair<const char*, Workload*>{"f32", &f32}, {"f64", &f64}}) {
    for (int i = 0; i < 5; ++i) w->run();  // warm-up
    std::vector<double> times;
    for (int i = 0; i < 30; ++i) times.push_back(w->run());
    std::cout << "attn LSTM fwd+bwd [32, 20, 128] -> 128, " << name << ": median " << median(times) / 1000
              << " ms\n";
  }
  return 0;
}
