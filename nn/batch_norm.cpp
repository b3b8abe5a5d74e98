#include "batch_norm.hpp"

#include "../core/ops.hpp"

#include <sstream>

namespace attn::nn {

namespace {

// running = (1 - momentum) * running + momentum * scale * batch, in place (no gradient):
// handles held elsewhere (an optimizer's, a checkpoint's) see the new values.
template <class T>
void update_(Tensor& running, const Tensor& batch, double momentum, double scale) {
  xt::xarray<T>& r = running.data<T>();
  const xt::xarray<double> b = batch.to_array();  // [1, C, 1, 1]
  for (std::size_t c = 0; c < r.size(); ++c)
    r(c) = T((1.0 - momentum) * double(r(c)) + momentum * scale * b.flat(c));
}

void update(Tensor& running, const Tensor& batch, double momentum, double scale) {
  ATTN_DISPATCH(running.dtype(), update_, running, batch, momentum, scale);
}

template <class T>
void count_(Tensor& counter) {
  counter.data<T>().flat(0) += T(1);
}

void count(Tensor& counter) { ATTN_DISPATCH(counter.dtype(), count_, counter); }

}  // namespace

BatchNorm2d::BatchNorm2d(std::size_t num_features, double eps, double momentum, bool affine, bool track_running_stats)
    : Module("BatchNorm2d"), num_features(num_features), eps(eps), momentum(momentum), affine(affine),
      track_running_stats(track_running_stats) {
  if (num_features == 0) throw ValueError("BatchNorm2d: num_features must be >= 1, got 0");
  if (!(eps > 0.0)) throw ValueError("BatchNorm2d: eps must be > 0, got " + std::to_string(eps));
  if (!(momentum >= 0.0 && momentum <= 1.0))
    throw ValueError("BatchNorm2d: momentum must be between 0 and 1, got " + std::to_string(momentum));
  if (affine) {
    weight = ones({num_features});
    bias = zeros({num_features});
    register_parameter("weight", weight);
    register_parameter("bias", bias);
  }
  if (track_running_stats) {
    running_mean = zeros({num_features});
    running_var = ones({num_features});
    num_batches_tracked = zeros(Shape{});
    register_buffer("running_mean", running_mean);
    register_buffer("running_var", running_var);
    register_buffer("num_batches_tracked", num_batches_tracked);
  }
}

Tensor BatchNorm2d::forward(const Tensor& x) {
  if (!x.defined()) throw ValueError("BatchNorm2d: the input tensor is undefined");
  if (x.dim() != 4 || x.size(1) != num_features)
    throw ShapeError("BatchNorm2d: expected input [N, " + std::to_string(num_features) + ", H, W], got " +
                     shape_str(x.shape()));
  const long C = long(num_features);
  const std::size_t n = x.size(0) * x.size(2) * x.size(3);  // values per channel
  const bool batch_stats = is_training() || !track_running_stats;
  Tensor mean, var;  // [1, C, 1, 1]
  if (batch_stats) {
    if (n <= 1)
      throw ValueError("BatchNorm2d: expected more than 1 value per channel when training, got input " +
                       shape_str(x.shape()));
    mean = attn::mean(x, {0, 2, 3}, true);
    const Tensor centered = x - mean;
    var = attn::mean(centered * centered, {0, 2, 3}, true);  // biased: divides by n
    if (is_training() && track_running_stats) {
      no_grad guard;
      update(running_mean, mean, momentum, 1.0);
      update(running_var, var, momentum, double(n) / double(n - 1));  // unbiased: n / (n - 1) times the biased
      count(num_batches_tracked);
    }
  } else {
    mean = reshape(running_mean, {1, C, 1, 1});
    var = reshape(running_var, {1, C, 1, 1});
  }
  Tensor y = (x - mean) / sqrt(var + eps);  // [N, C, H, W]
  if (affine) y = y * reshape(weight, {1, C, 1, 1}) + reshape(bias, {1, C, 1, 1});
  return y;
}

std::string BatchNorm2d::extra_repr() const {
  std::ostringstream os;
  os << num_features << ", eps=" << eps << ", momentum=" << momentum << ", affine=" << (affine ? "true" : "false")
     << ", track_running_stats=" << (track_running_stats ? "true" : "false");
  return os.str();
}

}  // namespace attn::nn
