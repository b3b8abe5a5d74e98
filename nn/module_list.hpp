// nn::ModuleList<M>: a numbered list of modules, as torch.nn.ModuleList.
// Its children are named "0", "1", ..., so a model holding one as "layers"
// lists parameters as "layers.0.weight", "layers.1.weight", ... like PyTorch.
//
//   attn::nn::ModuleList<attn::nn::Linear> layers;
//   layers.emplace_back(4, 8);   // builds Linear(4, 8) in place and registers it as "0"
//   layers.emplace_back(8, 2);   // "1"
//   for (auto& layer : layers) x = layer(x);
//
// Modules can be neither copied nor moved, so the list owns each one through a
// std::unique_ptr and hands out references.
#pragma once

#include "module.hpp"

#include <memory>
#include <string>
#include <vector>

namespace attn::nn {

template <class M>
class ModuleList : public Module {
 private:
  using Items = std::vector<std::unique_ptr<M>>;

 public:
  ModuleList() : Module("ModuleList") {}

  template <class... Args>
  M& emplace_back(Args&&... args) {
    items_.push_back(std::make_unique<M>(std::forward<Args>(args)...));
    return register_module(std::to_string(items_.size() - 1), *items_.back());
  }

  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  M& operator[](std::size_t i) { return *items_.at(i); }
  const M& operator[](std::size_t i) const { return *items_.at(i); }

  // Iterates over the modules themselves (M&), not the pointers.
  template <class It, class Ref>
  struct Iter {
    It it;
    Ref operator*() const { return **it; }
    Iter& operator++() { ++it; return *this; }
    bool operator!=(const Iter& other) const { return it != other.it; }
  };
  auto begin() { return Iter<typename Items::iterator, M&>{items_.begin()}; }
  auto end() { return Iter<typename Items::iterator, M&>{items_.end()}; }
  auto begin() const { return Iter<typename Items::const_iterator, const M&>{items_.begin()}; }
  auto end() const { return Iter<typename Items::const_iterator, const M&>{items_.end()}; }

 private:
  Items items_;
};

}  // namespace attn::nn
