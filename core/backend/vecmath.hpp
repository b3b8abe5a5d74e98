// exp, tanh and sigmoid over contiguous arrays with the widest SIMD
// instructions this CPU has, and a plain copy.
//
// libattn is compiled for any x86-64 CPU (SSE2), so xtensor's own exp and tanh
// use 2 doubles at a time. These functions are compiled three times, for
// SSE2, AVX2 and AVX-512 (core/vecmath/), and the first call picks the widest
// this CPU runs. On an AVX-512 CPU, exp of a double takes 0.9 ns instead of 4.9.
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
// more than 16384 values are shared out over attn's threads (core/parallel.hpp).
void exp(const float* x, float* y, std::size_t n, Isa isa = best());
void exp(const double* x, double* y, std::size_t n, Isa isa = best());
void tanh(const float* x, float* y, std::size_t n, Isa isa = best());
void tanh(const double* x, double* y, std::size_t n, Isa isa = best());
void sigmoid(const float* x, float* y, std::size_t n, Isa isa = best());  // 1 / (1 + exp(-x))
void sigmoid(const double* x, double* y, std::size_t n, Isa isa = best());

// y[i] = x[i] for i < n (x and y do not overlap), on the caller's thread: how attn
// copies arrays (copy_of in core/node.hpp, the slices of ops/layout.hpp), instead
// of memcpy. glibc before 2.39 copies 4 KB and more with `rep movsb` on CPUs that
// report fast short rep movsb (FSRM), and on AMD Zen 3 and Zen 4 that instruction
// runs about 20 times slower when the destination sits less than 32 bytes after
// the source, counted within a 4 KB page (glibc bug 30994). malloc puts two arrays
// of one size allocated one after the other 16 bytes apart in that sense, so attn
// hit the slow case all the time: 32 KB took 17 us instead of 0.8 on a Zen 3
// (docs/benchmarks.md). This loop runs at memcpy's good speed wherever the arrays sit.
void copy(const float* x, float* y, std::size_t n, Isa isa = best());
void copy(const double* x, double* y, std::size_t n, Isa isa = best());

}  // namespace attn::vecmath
