// Lab 23's grader: conv2d's forward and backward by im2col, and max_pool2d's backward
// (labs/23_conv2d/README.md).
//
//   lab::conv2d::grade(lab::conv2d::Conv2d{im2col, col2im, conv2d_forward, conv2d_backward,
//                                         max_pool2d_backward});
//   // "lab 23: k of M checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace conv2d {

using attn::Size2;  // (height, width): a kernel, stride or padding per spatial dim

// dL/dx, dL/dW, dL/db of y = conv2d(x, W, b), each in its input's shape.
struct Grads {
  Tensor x;       // [N, C, H, W]
  Tensor weight;  // [O, C, kH, kW]
  Tensor bias;    // [O]
};

struct Conv2d {
  // x [N, C, H, W] -> cols [C kH kW, N outH outW]: column (n, i, j) holds the window that output pixel
  // (n, i, j) reads, row (c, u, v) the pixel x_pad[n, c, i sH + u, j sW + v] (0 where it is padding).
  std::function<Tensor(const Tensor& x, Size2 kernel, Size2 stride, Size2 padding)> im2col;
  // dcols [C kH kW, N outH outW] -> dx [N, C, H, W] (x_shape): each entry added onto the pixel im2col read it
  // from (a pixel in several windows gets the sum; the padding's entries are dropped).
  std::function<Tensor(const Tensor& dcols, const Shape& x_shape, Size2 kernel, Size2 stride, Size2 padding)> col2im;
  // x [N, C, H, W], weight [O, C, kH, kW], bias [O] -> y [N, O, outH, outW], as torch.nn.functional.conv2d.
  std::function<Tensor(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2 stride, Size2 padding)>
      conv2d_forward;
  // The gradients of the three inputs, given g = dL/dy [N, O, outH, outW].
  std::function<Grads(const Tensor& x, const Tensor& weight, const Tensor& g, Size2 stride, Size2 padding)>
      conv2d_backward;
  // y = max_pool2d(x) [N, C, outH, outW] (the library's forward), g = dL/dy -> dL/dx [N, C, H, W]: each window's
  // gradient to the first maximum of the window (row-major order), padding read as -inf.
  std::function<Tensor(const Tensor& x, const Tensor& y, const Tensor& g, Size2 kernel, Size2 stride,
                       Size2 padding)>
      max_pool2d_backward;
};

// Runs every check on the learner's functions, printing each to `os`.
Result grade(const Conv2d& c, std::ostream& os = std::cout);

}  // namespace conv2d
}  // namespace lab
