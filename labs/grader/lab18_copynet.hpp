// Lab 18's grader: CopyNet's joint generate/copy distribution (Gu et al. 2016; labs/18_copynet/README.md).
//
//   lab::copynet::grade(lab::copynet::CopyNet{joint});
//   // "lab 18: k of M checks pass"
#pragma once

#include "lab.hpp"

namespace lab {
namespace copynet {

using attn::Index;

struct CopyNet {
  // psi_g [B, V] (the generate scores, one per vocabulary word), psi_c [B, S] (the copy scores, one per
  // source position), copy_ids [B, S] (each position's word in the extended vocabulary: ids < V are
  // vocabulary words, V .. E-1 the batch's source-only words; <pad> = 0 past a row's length), lengths (each
  // row's real source positions), E (the extended vocabulary's size, >= V) -> p [B, E]:
  //   one softmax over [psi_g ; psi_c of the real positions] (padding never copied), then
  //   p(y) = p_g(y) [y < V] + sum over the real positions j with copy_ids(b, j) = y of p_c(j).
  std::function<Tensor(const Tensor& psi_g, const Tensor& psi_c, const Index& copy_ids,
                       const std::vector<std::size_t>& lengths, std::size_t extended_vocab)>
      joint;
};

// Runs every check on the learner's functions, printing each to `os`.
Result grade(const CopyNet& c, std::ostream& os = std::cout);

}  // namespace copynet
}  // namespace lab
