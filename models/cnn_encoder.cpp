#include "cnn_encoder.hpp"

#include "../core/ops.hpp"

#include <string>

namespace attn::models {

namespace {

const CnnEncoderConfig& checked(const CnnEncoderConfig& c) {
  if (c.in_channels == 0) throw ValueError("CnnEncoder: in_channels must be positive, got 0");
  if (c.channels.empty()) throw ValueError("CnnEncoder: channels must name at least one block, got none");
  for (std::size_t i = 0; i < c.channels.size(); ++i)
    if (c.channels[i] == 0) throw ValueError("CnnEncoder: block " + std::to_string(i) + " has 0 channels");
  if (c.kernel_size % 2 == 0)
    throw ValueError("CnnEncoder: kernel_size must be odd (padding kernel_size / 2 keeps the size), got " +
                     std::to_string(c.kernel_size));
  if (c.pool == 0) throw ValueError("CnnEncoder: pool must be positive, got 0");
  return c;
}

std::string size_str(std::size_t height, std::size_t width) {
  return std::to_string(height) + "x" + std::to_string(width);
}

}  // namespace

CnnEncoder::CnnEncoder(const CnnEncoderConfig& cfg) : Module("CnnEncoder"), config(checked(cfg)) {
  std::size_t in = cfg.in_channels;
  for (std::size_t i = 0; i < cfg.channels.size(); ++i) {
    const std::size_t out = cfg.channels[i];
    convs.push_back(std::make_unique<nn::Conv2d>(in, out, cfg.kernel_size, 1, cfg.kernel_size / 2, /*bias=*/false));
    norms.push_back(std::make_unique<nn::BatchNorm2d>(out));
    relus.push_back(std::make_unique<nn::ReLU>());
    pools.push_back(std::make_unique<nn::MaxPool2d>(cfg.pool));
    register_module(std::to_string(4 * i), *convs.back());  // nn.Sequential's numbering, four layers a block
    register_module(std::to_string(4 * i + 1), *norms.back());
    register_module(std::to_string(4 * i + 2), *relus.back());
    register_module(std::to_string(4 * i + 3), *pools.back());
    in = out;
  }
}

std::string CnnEncoder::extra_repr() const {
  std::string channels;
  for (std::size_t c : config.channels) channels += (channels.empty() ? "" : ", ") + std::to_string(c);
  return "in_channels=" + std::to_string(config.in_channels) + ", channels={" + channels +
         "}, kernel_size=" + std::to_string(config.kernel_size) + ", pool=" + std::to_string(config.pool);
}

Size2 CnnEncoder::grid_size(std::size_t height, std::size_t width) const {
  std::size_t rows = height, cols = width;
  for (std::size_t i = 0; i < config.channels.size(); ++i) {
    if (rows < config.pool || cols < config.pool) {
      std::size_t needed = 1;
      for (std::size_t j = 0; j < config.channels.size(); ++j) needed *= config.pool;
      throw ShapeError("CnnEncoder: an image of " + size_str(height, width) + " is too small for " +
                       std::to_string(config.channels.size()) + " blocks with a max-pool of " +
                       std::to_string(config.pool) + " each: it needs at least " + size_str(needed, needed));
    }
    rows /= config.pool;  // the convolution keeps the size; the pool floors, as PyTorch's
    cols /= config.pool;
  }
  return {rows, cols};
}

Tensor CnnEncoder::forward(const Tensor& images) {
  if (!images.defined()) throw ValueError("CnnEncoder: the images are undefined");
  const Shape shape = images.shape();
  if (shape.size() != 4 || shape[0] == 0 || shape[1] != config.in_channels)
    throw ShapeError("CnnEncoder: expected images [B, " + std::to_string(config.in_channels) +
                     ", H, W] (B > 0 images of " + std::to_string(config.in_channels) + " channels), got " +
                     shape_str(shape));
  const Size2 grid = grid_size(shape[2], shape[3]);  // throws for too small an image
  Tensor x = images;  // [B, C_0, H, W]
  for (std::size_t i = 0; i < convs.size(); ++i)
    x = (*pools[i])((*relus[i])((*norms[i])((*convs[i])(x))));  // [B, C_i, H_i / pool, W_i / pool]
  const long B = static_cast<long>(shape[0]), D = static_cast<long>(feature_dim());
  x = permute(x, {0, 2, 3, 1});  // [B, D, rows, cols] -> [B, rows, cols, D]
  return reshape(x, {B, static_cast<long>(grid[0] * grid[1]), D});  // [B, rows * cols, D]: cell j = r * cols + c
}

}  // namespace attn::models
