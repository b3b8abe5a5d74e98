// Every differentiable op of attn, with PyTorch's names and numpy's broadcasting.
// Each op's forward and backward live side by side in core/ops/<family>.cpp.
// The fused ops (layer_norm, masked_softmax, the LSTM ops, additive_score,
// split/merge_heads) are declared in core/backend/fused.hpp; attn.hpp has both.
// Dims may be negative (-1 is the last). Bad shapes throw attn::ShapeError.
#pragma once

#include "random.hpp"
#include "tensor.hpp"

#include <optional>
#include <string>
#include <vector>

namespace attn {

// ---- elementwise, broadcasting (core/ops/elementwise.cpp) -------------------
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor neg(const Tensor& x);
Tensor pow(const Tensor& x, double exponent);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x);  // exact: x * Phi(x), as torch.nn.functional.gelu

// Scalar operands (the scalar takes the tensor's dtype).
Tensor add(const Tensor& a, double b);
Tensor mul(const Tensor& a, double b);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& x);
Tensor operator+(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(const Tensor& a, double b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(const Tensor& a, double b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(const Tensor& a, double b);
Tensor operator/(double a, const Tensor& b);

// ---- reductions (core/ops/reduce.cpp) ----------------------------------------
Tensor sum(const Tensor& x);                                              // all elements
Tensor sum(const Tensor& x, const std::vector<long>& dims, bool keepdim = false);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, const std::vector<long>& dims, bool keepdim = false);
Tensor max(const Tensor& x);                                              // gradient to the first maximum
Tensor max(const Tensor& x, long dim, bool keepdim = false);
Tensor logsumexp(const Tensor& x, long dim, bool keepdim = false);        // stable: max + log sum exp(x - max)

// ---- softmax (core/ops/softmax.cpp) ------------------------------------------
Tensor softmax(const Tensor& x, long dim);      // stable: no NaN for inputs of 1000
Tensor log_softmax(const Tensor& x, long dim);

// ---- matrix products (core/ops/matmul.cpp) -----------------------------------
// numpy semantics: 1-D x 1-D is a dot product; 2-D x 2-D a matrix product;
// N-D operands are stacks of matrices with broadcast batch dims.
Tensor matmul(const Tensor& a, const Tensor& b);
// x [..., in] times weight [out, in] transposed, plus bias [out]: y [..., out].
// The bias may also be a whole [..., out] array (x at least 2-D) that the product
// is added onto, as PyTorch's addmm(bias, x, weight.t()): an RNN step's h W_hh^T
// added to the input's share of the gates.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

// ---- 1-D convolution (core/ops/conv.cpp) -------------------------------------
// torch.nn.functional.conv1d with stride 1: x [N, C_in, L], weight [C_out, C_in, K],
// bias [C_out] (optional) -> [N, C_out, L + pl + pr - K + 1], zero-padded by
// `padding` on both ends, by pl and pr, or by "same" (output length L) / "valid" (none).
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), std::size_t padding = 0);
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::size_t padding_left,
              std::size_t padding_right);
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, const std::string& padding);

// ---- shapes (core/ops/shape.cpp) ---------------------------------------------
Tensor transpose(const Tensor& x, long dim0, long dim1);
Tensor permute(const Tensor& x, const std::vector<long>& dims);
Tensor reshape(const Tensor& x, const std::vector<long>& shape);  // one entry may be -1
Tensor unsqueeze(const Tensor& x, long dim);
Tensor squeeze(const Tensor& x, long dim);
Tensor concat(const std::vector<Tensor>& xs, long dim);           // also called cat
Tensor stack(const std::vector<Tensor>& xs, long dim);
std::vector<Tensor> split(const Tensor& x, std::size_t split_size, long dim);
std::vector<Tensor> chunk(const Tensor& x, std::size_t chunks, long dim);
Tensor narrow(const Tensor& x, long dim, std::size_t start, std::size_t length);
Tensor select(const Tensor& x, long dim, long index);  // removes dim: x[:, t] for dim 1
Tensor expand(const Tensor& x, const Shape& shape);     // broadcast to shape (copy)

// ---- indexing and masks (core/ops/index.cpp) ---------------------------------
Tensor index_select(const Tensor& x, long dim, const Index& index);
// Rows of weight [V, D] for every id: ids of shape S give [S..., D]. Backward scatter-adds.
Tensor embedding(const Tensor& weight, const Index& ids);
// Windows of `width` consecutive rows of x [B, N, D]: start [B, Q] -> [B, Q, width, D], window
// (b, q) being rows start(b, q) .. start(b, q) + width - 1 of x[b], rows outside [0, N) read as 0
// (start may be negative). Backward adds into x's gradient at those rows only: O(window), not O(N).
Tensor gather_windows(const Tensor& x, const Index& start, std::size_t width);
// Its layout counterpart: windows w [B, Q, W] put at positions start(b, q) .. + W - 1 of rows of
// n zeros -> [B, Q, n] (slots outside [0, n) dropped); the gradient reads those positions back.
Tensor place_windows(const Tensor& w, const Index& start, std::size_t n);
Tensor masked_fill(const Tensor& x, const Mask& mask, double value);  // mask broadcasts to x
Tensor where(const Mask& condition, const Tensor& a, const Tensor& b);

// ---- randomness (core/ops/dropout.cpp) ---------------------------------------
// Zeroes each element with probability p and scales the rest by 1 / (1 - p)
// when training; the identity otherwise.
Tensor dropout(const Tensor& x, double p, bool training = true, Generator& gen = default_generator());

// ---- no gradients (core/ops/compare.cpp) -------------------------------------
Index argmax(const Tensor& x, long dim, bool keepdim = false);
Mask eq(const Tensor& a, const Tensor& b);
Mask ne(const Tensor& a, const Tensor& b);
Mask lt(const Tensor& a, const Tensor& b);
Mask le(const Tensor& a, const Tensor& b);
Mask gt(const Tensor& a, const Tensor& b);
Mask ge(const Tensor& a, const Tensor& b);
Tensor one_hot(const Index& ids, std::size_t num_classes, Dtype dtype = Dtype::Float64);

}  // namespace attn
