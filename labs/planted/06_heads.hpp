// Wrong solutions of lab 6; labs/tests/test_lab06.cpp proves the grader fails each,
// with a message pointing at the mistake.
#pragma once

#include "labs/grader/grader.hpp"
#include "labs/solutions/06_heads.hpp"

namespace lab {
namespace planted {
namespace heads {

using attn::Tensor;
namespace good = lab::solutions::heads;
using good::as_long;

inline std::vector<Planted<lab::heads::Heads>> all() {
  std::vector<Planted<lab::heads::Heads>> out;
  auto base = good::solution();

  auto s = base;
  s.split_heads = [](const Tensor& x, std::size_t H) {  // no transpose
    return attn::reshape(x, {as_long(x.size(0)), as_long(H), as_long(x.size(1)), -1});
  };
  out.push_back({"split_heads reshapes straight to [B, H, T, d]", s, "mixes time steps into heads"});

  s = base;
  s.split_heads = [](const Tensor& x, std::size_t H) {  // head h takes every H-th feature
    Tensor y = attn::reshape(x, {as_long(x.size(0)), as_long(x.size(1)), -1, as_long(H)});  // [B, T, d, H]
    return attn::permute(y, {0, 3, 1, 2});
  };
  out.push_back({"split_heads gives head h every H-th feature", s, "each head takes d consecutive features"});

  s = base;
  s.merge_heads = [](const Tensor& x) {  // no transpose back
    return attn::reshape(x, {as_long(x.size(0)), as_long(x.size(2)), -1});
  };
  out.push_back({"merge_heads reshapes without the transpose", s, "mixes heads into time steps"});

  s = base;
  s.split_heads = [](const Tensor& x, std::size_t H) {  // drops the features that do not fit
    std::size_t d = x.size(2) / H;
    return good::split_heads(attn::narrow(x, 2, 0, H * d), H);
  };
  out.push_back({"split_heads drops the features that do not divide", s, "must split evenly"});
  return out;
}

}  // namespace heads
}  // namespace planted
}  // namespace lab
