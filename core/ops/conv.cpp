// 1-D convolution, as torch.nn.functional.conv1d (stride 1, dilation 1, one group).
//
//   y[n, o, t] = b[o] + sum_{c, k} w[o, c, k] * x_pad[n, c, t + k]
//
// Written as im2col + matmul from ops that already have backward passes, so its
// backward is theirs, by the chain rule:
//   dL/dw[o, c, k] = sum_{n, t} dL/dy[n, o, t] x_pad[n, c, t + k]   (the matmul's weight gradient)
//   dL/dx_pad[n, c, t + k] += sum_o dL/dy[n, o, t] w[o, c, k]        (the matmul's input gradient, col2im by narrow's)
//   dL/db[o] = sum_{n, t} dL/dy[n, o, t]
#include "../ops.hpp"
#include "../errors.hpp"

namespace attn {

Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::size_t padding_left,
              std::size_t padding_right) {
  if (!x.defined() || !weight.defined()) throw ValueError("conv1d: the input or the weight is undefined");
  if (x.dim() != 3) throw ShapeError("conv1d: expected input [N, C_in, L], got " + shape_str(x.shape()));
  if (weight.dim() != 3 || weight.size(1) != x.size(1) || weight.size(2) == 0)
    throw ShapeError("conv1d: expected weight [C_out, " + std::to_string(x.size(1)) + ", K >= 1] for input " +
                     shape_str(x.shape()) + ", got " + shape_str(weight.shape()));
  const std::size_t N = x.size(0), C = x.size(1), L = x.size(2);
  const std::size_t O = weight.size(0), K = weight.size(2);
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != O))
    throw ShapeError("conv1d: expected bias [" + std::to_string(O) + "], got " + shape_str(bias.shape()));
  const std::size_t padded = L + padding_left + padding_right;
  if (padded < K)
    throw ShapeError("conv1d: the padded input has length " + std::to_string(padded) + ", shorter than the kernel (" +
                     std::to_string(K) + ")");
  const std::size_t L_out = padded - K + 1;

  // Zero padding on both ends of the length dim.
  std::vector<Tensor> parts;
  if (padding_left > 0) parts.push_back(zeros({N, C, padding_left}, x.dtype()));
  parts.push_back(x);
  if (padding_right > 0) parts.push_back(zeros({N, C, padding_right}, x.dtype()));
  const Tensor x_pad = parts.size() == 1 ? x : concat(parts, 2);  // [N, C, L + pl + pr]

  // im2col: column k holds the window shifted by k.
  std::vector<Tensor> shifted;
  for (std::size_t k = 0; k < K; ++k) shifted.push_back(narrow(x_pad, 2, k, L_out));  // K x [N, C, L_out]
  Tensor cols = stack(shifted, 3);                                                    // [N, C, L_out, K]
  cols = reshape(permute(cols, {0, 2, 1, 3}), {long(N), long(L_out), long(C * K)});    // [N, L_out, C*K]
  const Tensor w = reshape(weight, {long(O), long(C * K)});                           // [C_out, C*K]
  const Tensor y = linear(cols, w, bias);                                             // [N, L_out, C_out]
  return transpose(y, 1, 2);                                                          // [N, C_out, L_out]
}

Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::size_t padding) {
  return conv1d(x, weight, bias, padding, padding);
}

Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, const std::string& padding) {
  if (padding == "valid") return conv1d(x, weight, bias, 0, 0);
  if (padding != "same") throw ValueError("conv1d: padding must be \"same\", \"valid\" or a number, got \"" + padding + "\"");
  if (!weight.defined() || weight.dim() != 3 || weight.size(2) == 0)
    throw ShapeError("conv1d: expected weight [C_out, C_in, K >= 1], got " +
                     (weight.defined() ? shape_str(weight.shape()) : std::string("undefined")));
  // "same": K - 1 zeros in all, the odd one at the end, as PyTorch pads.
  const std::size_t total = weight.size(2) - 1;
  return conv1d(x, weight, bias, total / 2, total - total / 2);
}

}  // namespace attn
