// The narrow interface between the teaching engine (core/) and the fast
// backend (core/backend/). The engine's files include this header and nothing
// from the backend: what they need from it is here, by name.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attn {

class Tensor;

// ---- the switch: fused fast path (default) or composed teaching path --------
// With fused ops on, matmul, linear, softmax, log_softmax, cross_entropy and the
// fused ops (layer_norm, masked_softmax, the LSTM ops, additive_score,
// split/merge_heads) run the backend's versions. Off, each runs as the plain
// composition of core ops that docs/ops/*.md derives: same values and
// gradients, to rounding.
//   { attn::FusedOps guard(false); loss = model(x); loss.backward(); }
bool fused_ops_enabled();
void set_fused_ops(bool on);
class FusedOps {  // sets the switch for a scope, then puts it back
 public:
  explicit FusedOps(bool on);
  ~FusedOps();
  FusedOps(const FusedOps&) = delete;
  FusedOps& operator=(const FusedOps&) = delete;

 private:
  bool previous_;
};

// ---- kernels on contiguous arrays: y[i] = f(x[i]) for i < n ---------------
namespace kernels {
void exp(const float* x, float* y, std::size_t n);  // y may be x
void exp(const double* x, double* y, std::size_t n);
void tanh(const float* x, float* y, std::size_t n);
void tanh(const double* x, double* y, std::size_t n);
void sigmoid(const float* x, float* y, std::size_t n);
void sigmoid(const double* x, double* y, std::size_t n);
void copy(const float* x, float* y, std::size_t n);  // x and y do not overlap
void copy(const double* x, double* y, std::size_t n);
}  // namespace kernels

// ---- the backend's versions of core ops, for the switch's fused path -------
namespace fused {
Tensor matmul(const Tensor& a, const Tensor& b);  // BLAS gemm, products planned and shared over threads
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);
Tensor softmax(const Tensor& x, std::size_t axis);  // lane loops instead of broadcast expressions
Tensor log_softmax(const Tensor& x, std::size_t axis);
// -sum_c q_c log softmax(logits)_c per row of logits [..., C] -> [...], with q = 1 - s on the
// row's target and s / C everywhere, 0 where the target is ignore_index (nn::cross_entropy).
Tensor cross_entropy(const Tensor& logits, const std::int64_t* targets, long ignore_index, double label_smoothing);
}  // namespace fused

// ---- the profiler's hooks (core/backend/profiler.hpp) ----------------------
namespace profiler {
void forward_recorded(const char* op);
void backward_ran(const char* op, double seconds);
namespace detail {
extern bool on;  // one branch per op when the profiler is off
}
}  // namespace profiler

}  // namespace attn
