// Multi-head attention's rearrangements as one copy each (fused ops):
//   split_heads: [B, T, H * d] -> [B, H, T, d], composed: transpose(reshape(x, [B, T, H, d]), 1, 2)
//   merge_heads: [B, H, T, d] -> [B, T, H * d], composed: reshape(transpose(x, 1, 2), [B, T, H * d])
// The composed versions copy twice (reshape, then transpose); these once.
#include "fused.hpp"

#include "../kernels.hpp"
#include "../ops.hpp"
#include "../ops/layout.hpp"
#include "../record.hpp"

namespace attn {

namespace {

// [B, T, H * d] read as [B, T, H, d] and permuted to [B, H, T, d] (dims 0, 2, 1, 3), or back.
template <class T>
Tensor heads_(const Tensor& x, const Shape& read_as, const Shape& out_shape, const char* op) {
  const std::vector<std::size_t> swap_1_2{0, 2, 1, 3};  // its own inverse
  xt::xarray<T> y = permuted(x.data<T>(), read_as, swap_1_2);
  y.reshape(out_shape);
  // The output read as 4-d: [B, H, T, d] (split) or [B, T, H, d] (merge), read_as with dims 1, 2 swapped.
  const Shape out_as{read_as[0], read_as[2], read_as[1], read_as[3]};
  return record<T>(op, std::move(y), {x}, [swap_1_2, out_as](Node<T>& out) {
    // a permutation only moves values: the gradient, read as 4-d, moves back by the same swap
    xt::xarray<T> g = permuted(out.grad, out_as, swap_1_2);
    g.reshape(out.input(0).shape());
    out.add_to_input_grad(0, std::move(g));
  });
}

}  // namespace

Tensor split_heads(const Tensor& x, std::size_t num_heads) {
  check_inputs("split_heads", {&x});
  const Shape s = x.shape();
  if (s.size() != 3 || num_heads == 0 || s[2] % num_heads != 0)
    throw ShapeError("split_heads: expected x [B, T, E] with E a multiple of num_heads = " +
                     std::to_string(num_heads) + ", got " + shape_str(s));
  const std::size_t B = s[0], T = s[1], H = num_heads, d = s[2] / num_heads;
  // [B, T, E] read as [B, T, H, d] -> [B, H, T, d]
  if (!fused_ops_enabled()) return transpose(reshape(x, {long(B), long(T), long(H), long(d)}), 1, 2);  // composed
  return ATTN_DISPATCH(x.dtype(), heads_, x, Shape{B, T, H, d}, Shape{B, H, T, d}, "split_heads");
}

Tensor merge_heads(const Tensor& x) {
  check_inputs("merge_heads", {&x});
  const Shape s = x.shape();
  if (s.size() != 4) throw ShapeError("merge_heads: expected x [B, H, T, d], got " + shape_str(s));
  const std::size_t B = s[0], H = s[1], T = s[2], d = s[3];
  // [B, H, T, d] -> [B, T, H, d] read as [B, T, E]
  if (!fused_ops_enabled()) return reshape(transpose(x, 1, 2), {long(B), long(T), long(H * d)});  // composed
  return ATTN_DISPATCH(x.dtype(), heads_, x, s, Shape{B, T, H * d}, "merge_heads");
}

}  // namespace attn
