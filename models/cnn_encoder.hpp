// The encoder of Show, Attend and Tell (Xu et al. 2015), trained from scratch: a few
// convolution blocks turn an image into an L x L grid of annotation vectors a_j, one
// per cell. A cell is centred on its own block of pixels but sees more (three 3x3
// convolutions with 2x2 pools: 22 x 22 pixels at a stride of 8), so neighbours overlap.
// Where this differs from the paper: Xu et al. read a pretrained VGG, not fine-tuned, at
// conv5_4 before its pool (14 x 14 x 512); this CNN is small, uses batch norm, pools in
// its last block too, and learns through the caption's loss.
//
//   block i   x <- max_pool(relu(batch_norm(conv(x))))     (conv k x k, padding k / 2: the size is kept;
//                                                           the pool halves it, for pool = 2)
//   cells     a_j = x[:, :, r, c] with j = r * cols + c    (row-major: row 0 left to right, then row 1, ...)
//
//   CnnEncoderConfig cfg;                      // channels {16, 32, 64}, 3x3 convolutions, 2x2 pools
//   CnnEncoder encoder(cfg);
//   Tensor a = encoder(images);                // [B, 3, 64, 64] -> [B, 64, 64]: an 8 x 8 grid of 64 features
//   encoder.grid_size(64, 64);                 // {8, 8}: rows and columns of the grid, for the maps
//
// The layers are numbered as a PyTorch nn.Sequential of the same layers numbers them,
// four per block (conv, batch norm, ReLU, max-pool), so its state_dict loads as is:
//
//   torch.nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
//                       nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1, bias=False), ...)
//   keys: 0.weight, 1.weight, 1.bias, 1.running_mean, 1.running_var, 1.num_batches_tracked, 4.weight, ...
//
// The convolutions have no bias: the batch norm right after subtracts each channel's
// mean, so a bias there would cancel out (its gradient is zero) and batch norm's own
// bias takes its place. Batch norm normalizes with the batch's statistics in training
// mode and with its running statistics in eval mode: decode in eval mode.
#pragma once

#include "../nn/activation.hpp"
#include "../nn/batch_norm.hpp"
#include "../nn/conv2d.hpp"
#include "../nn/pool2d.hpp"

#include <memory>
#include <string>
#include <vector>

namespace attn::models {

struct CnnEncoderConfig {
  std::size_t in_channels = 3;                   // RGB
  std::vector<std::size_t> channels = {16, 32, 64};  // out channels of each block; the last is D
  std::size_t kernel_size = 3;                   // odd, so that padding kernel_size / 2 keeps the size
  std::size_t pool = 2;                          // max-pool kernel and stride of every block
};

class CnnEncoder : public nn::Module {
 public:
  // Weights drawn from default_generator(), as PyTorch initializes the same layers.
  explicit CnnEncoder(const CnnEncoderConfig& config);

  // images [B, in_channels, H, W] -> annotation vectors [B, rows * cols, D] (row-major cells),
  // with {rows, cols} = grid_size(H, W). forward is not const: batch norm updates its
  // running statistics in training mode.
  Tensor forward(const Tensor& images);
  Tensor operator()(const Tensor& images) { return forward(images); }

  // The grid an image of height x width becomes: {rows, cols}. Throws ShapeError when
  // the image is too small for the blocks' pools (some block would get less than one pixel).
  Size2 grid_size(std::size_t height, std::size_t width) const;
  std::size_t feature_dim() const { return config.channels.back(); }  // D
  std::string extra_repr() const override;

  CnnEncoderConfig config;
  std::vector<std::unique_ptr<nn::Conv2d>> convs;       // registered as "0", "4", "8", ...
  std::vector<std::unique_ptr<nn::BatchNorm2d>> norms;  // "1", "5", "9", ...
  std::vector<std::unique_ptr<nn::ReLU>> relus;         // "2", "6", "10", ...
  std::vector<std::unique_ptr<nn::MaxPool2d>> pools;    // "3", "7", "11", ...
};

}  // namespace attn::models
