// Lab 18: CopyNet's joint generate/copy distribution (Gu, Lu, Li & Li 2016).
// What to write: labs/18_copynet/README.md. Check it: tools/lab.sh 18 (your copy is labs/work/18_copynet.cpp).
#include "labs/grader/lab18_copynet.hpp"

using attn::Index;
using attn::Tensor;

// ---- your code ----
// psi_g [B, V] (the generate scores, one per vocabulary word), psi_c [B, S] (the copy scores, one per source
// position), copy_ids [B, S] (each position's word in the extended vocabulary: ids < V are vocabulary words,
// V .. E-1 the batch's source-only words; <pad> = 0 past lengths[b]), E = extended_vocab -> p [B, E]:
//   [p_g ; p_c] = softmax([psi_g ; psi_c])   ONE softmax over V + S slots, the padding's copy scores
//                                            blocked first: attn::masked_fill(psi_c, padding, -1e30)
//   p(y) = p_g(y) [y < V] + sum over the positions j with copy_ids(b, j) = y of p_c(j)
// Build it from attn's ops so that autograd finds the backward: attn::concat, attn::softmax(x, -1), attn::narrow;
// p_g widened to E with attn::concat({p_g, attn::zeros({B, E - V})}, -1) when E > V; the copies as a product
// with attn::one_hot(copy_ids, E) [B, S, E]: attn::squeeze(attn::matmul(attn::unsqueeze(p_c, 1), ...), 1).
// padding: an attn::Mask [B, S] (xt::zeros<bool>({B, S})), true at j >= lengths[b].
Tensor joint(const Tensor& psi_g, const Tensor& psi_c, const Index& copy_ids, const std::vector<std::size_t>& lengths,
             std::size_t extended_vocab) {
  lab::not_implemented("joint");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::copynet::CopyNet mine{joint};
  return lab::copynet::grade(mine).exit_code();
}
#endif
