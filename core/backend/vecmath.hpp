// exp, tanh and sigmoid over contiguous arrays with the widest SIMD
// instructions this CPU has, and a plain copy.
//
// libattn is compiled for any x86-64 CPU (SSE2), so xtensor's own exp and tanh
// use 2 doubles at a time. These functions are compiled three times, for
// SSE2, AVX2 and AVX-512 (core/backend/vecmath/), and the first call picks the widest
// this CPU runs. (docs/benchmarks.md has the timings.)
// Only the ops' hot loops call them (softmax, tanh, sigmoid, the LSTM cell);
// nothing in attn's headers depends on the choice, so code compiled against
// libattn (the notebooks) is unaffected by it.
#pragma once

#include <cstddef>

namespace attn::vecmath {

enum class Isa { baseline, avx2, avx512 };

bool supported(Isa isa);       // compiled in, and this CPU (and OS) can run it
Isa best();                    // the widest supported one: what the calls below use by default
const char* name(Isa isa);     // "baseline", "avx2", "avx512"

// y[i] = f(x[i]) for i < n; y may be x (in place). Results agree with std::exp and
// std::tanh to a few ulp. Throws ValueError if `isa` is not supported. Arrays of
// more than 16384 values are shared out over attn's threads (core/backend/parallel.hpp).
void exp(const float* x, float* y, std::size_t n, Isa isa = best());
void exp(const double* x, double* y, std::size_t n, Isa isa = best());
void tanh(const float* x, float* y, std::size_t n, Isa isa = best());
void tanh(const double* x, double* y, std::size_t n, Isa isa = best());
void sigmoid(const float* x, float* y, std::size_t n, Isa isa = best());  // 1 / (1 + exp(-x))
void sigmoid(const double* x, double* y, std::size_t n, Isa isa = best());

// y[i] = x[i] for i < n (x and y do not overlap), on the caller's thread: how attn
// copies arrays (copy_of in core/node.hpp, the slices of ops/layout.hpp) instead of
// memcpy, whose large-copy path is very slow for some placements of the two arrays
// on some CPUs (docs/benchmarks.md, "memcpy"). This loop is not.
void copy(const float* x, float* y, std::size_t n, Isa isa = best());
void copy(const double* x, double* y, std::size_t n, Isa isa = best());

}  // namespace attn::vecmath
