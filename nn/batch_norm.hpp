// nn::BatchNorm2d: batch normalization over the channels of images [N, C, H, W], as
// torch.nn.BatchNorm2d (Ioffe & Szegedy, 2015):
//
//   y = (x - mean) / sqrt(var + eps) * weight + bias        (per channel c)
//
// In training (module.train(), the default) mean and the biased variance (divide by n) are the
// batch's, over N, H and W (n = N*H*W values per channel), and the running statistics move toward
// them:  running = (1 - momentum) * running + momentum * batch, the variance unbiased (divide by
// n - 1) there, and num_batches_tracked counts the steps. In eval mode (module.eval()) the
// running statistics normalize instead, and nothing changes. forward is not const for that reason.
// Buffers and names as PyTorch's state_dict: weight, bias, running_mean, running_var, num_batches_tracked
// (a 0-d tensor here, of the module's dtype; PyTorch's int64 one loads into it). In float32 that
// count is exact only up to 2^24 steps (float64: 2^53); it only counts, as nothing here reads it.
// Not supported: momentum = None (PyTorch's cumulative moving average, which does read the count);
// momentum is always a number in [0, 1].
//
//   attn::nn::BatchNorm2d bn(16);  // x [N, 16, H, W] -> y [N, 16, H, W]
#pragma once

#include "module.hpp"

namespace attn::nn {

class BatchNorm2d : public Module {
 public:
  explicit BatchNorm2d(std::size_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                       bool track_running_stats = true);

  Tensor forward(const Tensor& x);
  Tensor operator()(const Tensor& x) { return forward(x); }
  std::string extra_repr() const override;

  std::size_t num_features;
  double eps, momentum;
  bool affine, track_running_stats;
  Tensor weight;               // [C], starts at 1 (undefined without affine)
  Tensor bias;                 // [C], starts at 0
  Tensor running_mean;         // [C], starts at 0 (undefined without track_running_stats)
  Tensor running_var;          // [C], starts at 1
  Tensor num_batches_tracked;  // [], starts at 0
};

}  // namespace attn::nn
