// core/kernels.hpp's switch and kernels, on the backend's vecmath.
#include "../kernels.hpp"

#include "vecmath.hpp"

#include <atomic>

namespace attn {

namespace {
std::atomic<bool> g_fused_ops{true};
}

bool fused_ops_enabled() { return g_fused_ops.load(std::memory_order_relaxed); }
void set_fused_ops(bool on) { g_fused_ops.store(on, std::memory_order_relaxed); }
FusedOps::FusedOps(bool on) : previous_(fused_ops_enabled()) { set_fused_ops(on); }
FusedOps::~FusedOps() { set_fused_ops(previous_); }

namespace kernels {
void exp(const float* x, float* y, std::size_t n) { vecmath::exp(x, y, n); }
void exp(const double* x, double* y, std::size_t n) { vecmath::exp(x, y, n); }
void tanh(const float* x, float* y, std::size_t n) { vecmath::tanh(x, y, n); }
void tanh(const double* x, double* y, std::size_t n) { vecmath::tanh(x, y, n); }
void sigmoid(const float* x, float* y, std::size_t n) { vecmath::sigmoid(x, y, n); }
void sigmoid(const double* x, double* y, std::size_t n) { vecmath::sigmoid(x, y, n); }
void copy(const float* x, float* y, std::size_t n) { vecmath::copy(x, y, n); }
void copy(const double* x, double* y, std::size_t n) { vecmath::copy(x, y, n); }
}  // namespace kernels

}  // namespace attn
