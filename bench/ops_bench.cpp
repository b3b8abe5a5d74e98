// How fast are attn's ops, and how much of their time is attn's own overhead?
//
// For add, tanh, softmax(dim -1) and matmul by a 128x128 matrix on a 32x128
// input, in float32 and float64, three rows each:
//   <op>/<dtype>/attn  forward + backward through attn (graph, closures, grads)
//   <op>/<dtype>/raw   the same arithmetic written directly in xtensor / BLAS, with
//                      the same kernels attn uses (vecmath's exp and tanh, gemm)
//   <op>/<dtype>/pair  the two in turns: the median of attn - raw over the pairs
//                      is the per-op overhead above the arithmetic (pair_bench).
// Then matmul alone (forward, no graph) at 512 and 1024, attn against a raw
// gemm call through core/blas.hpp, in GFLOP/s.
//
// bench/run.sh runs this and bench/torch_ops.py and prints one table.
// Threads: ATTN_NUM_THREADS (core/parallel.hpp); OpenBLAS always runs one.
#include "op_cases.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

using attn::Tensor;
using namespace bench;

namespace {

template <class Case>
void attn_bench(benchmark::State& state) {
  Case c;
  for (auto _ : state) c.attn();
}

template <class Case>
void raw_bench(benchmark::State& state) {
  Case c;
  for (auto _ : state) c.raw();
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// attn and raw one after the other, in turns (raw first in every other pair),
// each call timed alone. Counters: the median attn and raw times and the median
// of the differences attn - raw over the pairs, the overhead. (Timed in separate
// runs, the machine's drift would enter the difference: on this VM one op's
// time moves 6-7% within a second, several microseconds for matmul128.)
//
// Where the arrays sit in memory moves the times by more than the overhead: on
// a Zen 3 the same f64 add measured 0.4 to 1.8 us above raw from one heap layout
// to another (loads and stores whose addresses agree in their low 12 bits wait
// for each other). So each run starts from another layout, a spacer of another
// size held between the inputs and the first temporaries, and bench/run.py
// reports the median over the runs.
template <class Case>
void pair_bench(benchmark::State& state) {
  using clock = std::chrono::steady_clock;
  auto us = [](clock::time_point a, clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); };
  static std::size_t runs = 0;
  Case c;
  const std::vector<char> spacer(1040 * (1 + (runs++ * 7) % 16));
  std::vector<double> attn_us, raw_us, diff_us;
  bool raw_first = false;
  for (auto _ : state) {
    const auto t0 = clock::now();
    raw_first ? c.raw() : c.attn();
    const auto t1 = clock::now();
    raw_first ? c.attn() : c.raw();
    const auto t2 = clock::now();
    const double a = raw_first ? us(t1, t2) : us(t0, t1), r = raw_first ? us(t0, t1) : us(t1, t2);
    attn_us.push_back(a);
    raw_us.push_back(r);
    diff_us.push_back(a - r);
    raw_first = !raw_first;
  }
  state.counters["attn_us"] = median(attn_us);
  state.counters["raw_us"] = median(raw_us);
  state.counters["overhead_us"] = median(diff_us);
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
  auto reg = [&](const std::string& op, void (*attn)(benchmark::State&), void (*raw)(benchmark::State&),
                 void (*pair)(benchmark::State&)) {
    benchmark::RegisterBenchmark((op + "/" + dtype + "/attn").c_str(), attn)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((op + "/" + dtype + "/raw").c_str(), raw)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((op + "/" + dtype + "/pair").c_str(), pair)->Unit(benchmark::kMicrosecond);
  };
  reg("add", attn_bench<AddCase<T>>, raw_bench<AddCase<T>>, pair_bench<AddCase<T>>);
  reg("tanh", attn_bench<TanhCase<T>>, raw_bench<TanhCase<T>>, pair_bench<TanhCase<T>>);
  reg("softmax", attn_bench<SoftmaxCase<T>>, raw_bench<SoftmaxCase<T>>, pair_bench<SoftmaxCase<T>>);
  reg("matmul128", attn_bench<MatmulCase<T>>, raw_bench<MatmulCase<T>>, pair_bench<MatmulCase<T>>);
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
