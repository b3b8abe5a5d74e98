// Which of vecmath's compiled copies runs: the widest this CPU supports.
#include "vecmath.hpp"

#include "../errors.hpp"
#include "parallel.hpp"
#include "vecmath/entry_points.hpp"

#include <string>

namespace attn::vecmath {

namespace {

// One instruction set's functions for values of type T.
template <class T>
struct Kernels {
  void (*exp)(const T*, T*, std::size_t);
  void (*tanh)(const T*, T*, std::size_t);
  void (*sigmoid)(const T*, T*, std::size_t);
  void (*copy)(const T*, T*, std::size_t);
};

template <class T>
Kernels<T> kernels(Isa isa) {
  if (!supported(isa)) throw ValueError(std::string("vecmath: this CPU cannot run ") + name(isa));
  switch (isa) {
#if defined(__x86_64__)
    case Isa::avx512: return {avx512::exp, avx512::tanh, avx512::sigmoid, avx512::copy};
    case Isa::avx2: return {avx2::exp, avx2::tanh, avx2::sigmoid, avx2::copy};
#endif
    default: return {baseline::exp, baseline::tanh, baseline::sigmoid, baseline::copy};
  }
}

bool cpu_supports(Isa isa) {
#if defined(__x86_64__)
  // libgcc's checks include the OS's support (XGETBV): a CPU with AVX-512 under an
  // OS that does not save its registers reports no avx512f.
  switch (isa) {
    case Isa::baseline: return true;
    case Isa::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl");
  }
  return false;
#else
  return isa == Isa::baseline;
#endif
}

}  // namespace

bool supported(Isa isa) {
  static const bool yes[3] = {cpu_supports(Isa::baseline), cpu_supports(Isa::avx2), cpu_supports(Isa::avx512)};
  const auto i = static_cast<std::size_t>(isa);
  return i < 3 && yes[i];
}

Isa best() {
  static const Isa widest = supported(Isa::avx512) ? Isa::avx512 : supported(Isa::avx2) ? Isa::avx2 : Isa::baseline;
  return widest;
}

const char* name(Isa isa) {
  switch (isa) {
    case Isa::baseline: return "baseline";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
  }
  return "unknown";
}

namespace {

// Long arrays are cut into pieces of kValuesPerShare values, a share of them per
// thread (core/backend/parallel.hpp). That is a multiple of every SIMD width: each value
// goes through the same instructions whatever the cut, so the result is the same
// bits at any number of threads.
template <class T>
void run(void (*f)(const T*, T*, std::size_t), const T* x, T* y, std::size_t n) {
  parallel_for(n, kValuesPerShare, [&](std::size_t begin, std::size_t end) { f(x + begin, y + begin, end - begin); });
}

}  // namespace

void exp(const float* x, float* y, std::size_t n, Isa isa) { run(kernels<float>(isa).exp, x, y, n); }
void exp(const double* x, double* y, std::size_t n, Isa isa) { run(kernels<double>(isa).exp, x, y, n); }
void tanh(const float* x, float* y, std::size_t n, Isa isa) { run(kernels<float>(isa).tanh, x, y, n); }
void tanh(const double* x, double* y, std::size_t n, Isa isa) { run(kernels<double>(isa).tanh, x, y, n); }
void sigmoid(const float* x, float* y, std::size_t n, Isa isa) { run(kernels<float>(isa).sigmoid, x, y, n); }
void sigmoid(const double* x, double* y, std::size_t n, Isa isa) { run(kernels<double>(isa).sigmoid, x, y, n); }
// Not shared out: the next op would read the other core's half from that core's cache.
void copy(const float* x, float* y, std::size_t n, Isa isa) { kernels<float>(isa).copy(x, y, n); }
void copy(const double* x, double* y, std::size_t n, Isa isa) { kernels<double>(isa).copy(x, y, n); }

}  // namespace attn::vecmath
