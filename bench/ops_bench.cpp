// How fast are attn's ops, and how much of their time is attn's own overhead?
//
// For add, tanh, softmax(dim -1) and matmul by a 128x128 matrix on a 32x128
// input, in float32 and float64, two rows each:
//   <op>/<dtype>/attn  forward + backward through attn (graph, closures, grads)
//   <op>/<dtype>/raw   the same arithmetic written directly in xtensor / BLAS, with
//                      the same kernels attn uses (vecmath's exp and tanh, gemm)
// attn minus raw is the per-op overhead above the arithmetic.
// Then matmul alone (forward, no graph) at 512 and 1024, attn against a raw
// gemm call through core/blas.hpp, in GFLOP/s.
//
// bench/run.sh runs this and bench/torch_ops.py and prints one table.
// Threads: ATTN_NUM_THREADS (core/parallel.hpp); OpenBLAS always runs one.
#include "attn.hpp"
#include "core/blas.hpp"
#include "core/vecmath.hpp"

#include <benchmark/benchmark.h>
#include <xtensor/xmath.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

using attn::Tensor;

namespace {

constexpr std::size_t kRows = 32, kCols = 128;

template <class T>
Tensor input(const attn::Shape& shape, std::uint64_t seed, bool requires_grad = true) {
  attn::Generator gen(seed);
  Tensor t = attn::randn(shape, attn::dtype_of<T>(), gen);
  t.requires_grad_(requires_grad);
  return t;
}

// The same values as a bare array, for the raw rows.
template <class T>
xt::xarray<T> values(const attn::Shape& shape, std::uint64_t seed) {
  return input<T>(shape, seed, false).template data<T>();
}

// ---- attn: forward + backward with a fixed grad_output -----------------------

template <class T, class Op>
void attn_unary(benchmark::State& state, Op op) {
  Tensor x = input<T>({kRows, kCols}, 1), g = input<T>({kRows, kCols}, 2, false);
  for (auto _ : state) {
    Tensor y = op(x);
    y.backward(g);
    benchmark::ClobberMemory();  // (reading .grad() would copy it)
    x.zero_grad();
  }
}

template <class T>
void attn_add(benchmark::State& state) {
  Tensor a = input<T>({kRows, kCols}, 1), b = input<T>({kRows, kCols}, 3), g = input<T>({kRows, kCols}, 2, false);
  for (auto _ : state) {
    Tensor y = a + b;
    y.backward(g);
    benchmark::ClobberMemory();  // (reading .grad() would copy it)
    a.zero_grad();
    b.zero_grad();
  }
}

template <class T>
void attn_matmul(benchmark::State& state) {
  Tensor a = input<T>({kRows, kCols}, 1), w = input<T>({kCols, kCols}, 3), g = input<T>({kRows, kCols}, 2, false);
  for (auto _ : state) {
    Tensor y = attn::matmul(a, w);  // [32, 128] x [128, 128] -> [32, 128]
    y.backward(g);
    benchmark::ClobberMemory();  // (reading .grad() would copy it)
    a.zero_grad();
    w.zero_grad();
  }
}

// ---- raw: the same arithmetic, no graph --------------------------------------

template <class T>
void raw_add(benchmark::State& state) {
  const auto a = values<T>({kRows, kCols}, 1), b = values<T>({kRows, kCols}, 3);
  const auto g = values<T>({kRows, kCols}, 2);
  for (auto _ : state) {
    xt::xarray<T> y = a + b;
    xt::xarray<T> ga = attn::copy_of(g), gb = attn::copy_of(g);  // d(a + b)/da = d(a + b)/db = 1 (copied as attn does)
    benchmark::DoNotOptimize(y.data());
    benchmark::DoNotOptimize(ga.data());
    benchmark::DoNotOptimize(gb.data());
  }
}

template <class T>
void raw_tanh(benchmark::State& state) {
  const auto x = values<T>({kRows, kCols}, 1), g = values<T>({kRows, kCols}, 2);
  for (auto _ : state) {
    xt::xarray<T> y = xt::xarray<T>::from_shape(x.shape());
    attn::vecmath::tanh(x.data(), y.data(), y.size());
    xt::xarray<T> gx = g * (T(1) - y * y);
    benchmark::DoNotOptimize(gx.data());
  }
}

// The loops of core/ops/softmax.cpp for the last dim (rows are contiguous), no graph.
template <class T>
void raw_softmax(benchmark::State& state) {
  const auto x = values<T>({kRows, kCols}, 1), g = values<T>({kRows, kCols}, 2);
  const std::size_t n = kCols;
  for (auto _ : state) {
    xt::xarray<T> y = xt::xarray<T>::from_shape(x.shape()), dx = xt::xarray<T>::from_shape(x.shape());
    for (std::size_t r = 0; r < kRows; ++r) {  // y = x - max of its row
      const T* in = x.data() + r * n;
      const T m = *std::max_element(in, in + n);
      for (std::size_t j = 0; j < n; ++j) y.data()[r * n + j] = in[j] - m;
    }
    attn::vecmath::exp(y.data(), y.data(), y.size());  // y = exp(y), the whole array at once
    for (std::size_t r = 0; r < kRows; ++r) {           // y = y / sum of its row
      T* out = y.data() + r * n;
      T sum = 0;
      for (std::size_t j = 0; j < n; ++j) sum += out[j];
      for (std::size_t j = 0; j < n; ++j) out[j] /= sum;
    }
    for (std::size_t r = 0; r < kRows; ++r) {  // dx = y * (g - sum(g * y))
      const T *yr = y.data() + r * n, *gr = g.data() + r * n;
      T gy = 0;
      for (std::size_t j = 0; j < n; ++j) gy += gr[j] * yr[j];
      for (std::size_t j = 0; j < n; ++j) dx.data()[r * n + j] = yr[j] * (gr[j] - gy);
    }
    benchmark::DoNotOptimize(dx.data());
  }
}

template <class T>
void raw_matmul(benchmark::State& state) {
  const auto a = values<T>({kRows, kCols}, 1), w = values<T>({kCols, kCols}, 3);
  const auto g = values<T>({kRows, kCols}, 2);
  const std::size_t m = kRows, k = kCols, n = kCols;
  for (auto _ : state) {
    xt::xarray<T> y = xt::xarray<T>::from_shape({m, n}), da = xt::xarray<T>::from_shape({m, k}),
                  dw = xt::xarray<T>::from_shape({k, n});
    // [m, k] x [k, n] -> [m, n];  dA = G W^T: [m, n] x [k, n]^T -> [m, k];  dW = A^T G: [m, k]^T x [m, n] -> [k, n]
    attn::blas::gemm(false, false, m, n, k, T(1), a.data(), k, w.data(), n, T(0), y.data(), n);
    attn::blas::gemm(false, true, m, k, n, T(1), g.data(), n, w.data(), n, T(0), da.data(), k);
    attn::blas::gemm(true, false, k, n, m, T(1), a.data(), k, g.data(), n, T(0), dw.data(), n);
    benchmark::DoNotOptimize(dw.data());
  }
}

// ---- matmul throughput, forward only -----------------------------------------

void set_flops(benchmark::State& state, std::size_t n) {
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

template <class T>
void attn_matmul_big(benchmark::State& state, std::size_t n) {
  Tensor a = input<T>({n, n}, 1, false), b = input<T>({n, n}, 2, false);
  for (auto _ : state) benchmark::DoNotOptimize(attn::matmul(a, b).data<T>().data());  // [n, n] x [n, n]
  set_flops(state, n);
}

template <class T>
void raw_gemm_big(benchmark::State& state, std::size_t n) {
  const auto a = values<T>({n, n}, 1), b = values<T>({n, n}, 2);
  xt::xarray<T> c = xt::xarray<T>::from_shape({n, n});
  for (auto _ : state) {
    attn::blas::gemm(false, false, n, n, n, T(1), a.data(), n, b.data(), n, T(0), c.data(), n);  // [n, n] x [n, n]
    benchmark::DoNotOptimize(c.data());
  }
  set_flops(state, n);
}

template <class T>
void register_all(const std::string& dtype) {
  auto reg = [&](const std::string& name, void (*fn)(benchmark::State&)) {
    benchmark::RegisterBenchmark(name.c_str(), fn)->Unit(benchmark::kMicrosecond);
  };
  reg("add/" + dtype + "/attn", attn_add<T>);
  reg("add/" + dtype + "/raw", raw_add<T>);
  benchmark::RegisterBenchmark(("tanh/" + dtype + "/attn").c_str(),
                               [](benchmark::State& s) { attn_unary<T>(s, [](const Tensor& x) { return attn::tanh(x); }); })
      ->Unit(benchmark::kMicrosecond);
  reg("tanh/" + dtype + "/raw", raw_tanh<T>);
  benchmark::RegisterBenchmark(("softmax/" + dtype + "/attn").c_str(),
                               [](benchmark::State& s) { attn_unary<T>(s, [](const Tensor& x) { return attn::softmax(x, -1); }); })
      ->Unit(benchmark::kMicrosecond);
  reg("softmax/" + dtype + "/raw", raw_softmax<T>);
  reg("matmul128/" + dtype + "/attn", attn_matmul<T>);
  reg("matmul128/" + dtype + "/raw", raw_matmul<T>);
  for (std::size_t n : {512, 1024}) {
    const std::string size = std::to_string(n);
    benchmark::RegisterBenchmark(("gemm" + size + "/" + dtype + "/attn").c_str(),
                                 [n](benchmark::State& s) { attn_matmul_big<T>(s, n); })
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("gemm" + size + "/" + dtype + "/raw").c_str(),
                                 [n](benchmark::State& s) { raw_gemm_big<T>(s, n); })
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  attn::reuse_freed_memory();  // as the attn command line does (core/memory.hpp); run.py gives torch the same
  register_all<float>("f32");
  register_all<double>("f64");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
