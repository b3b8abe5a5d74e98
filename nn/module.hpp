// nn::Module: the base of every layer and model.
//
// A module registers its parameters (trainable Tensors), buffers (saved but not
// trained) and child modules under names, so that the whole tree can be
// listed, trained, converted and saved:
//
//   class TwoLayer : public attn::nn::Module {
//    public:
//     TwoLayer() : Module("TwoLayer"), fc1(4, 8), fc2(8, 2) {
//       register_module("fc1", fc1);
//       register_module("fc2", fc2);
//     }
//     Tensor forward(const Tensor& x) { return fc2(attn::relu(fc1(x))); }
//     Linear fc1, fc2;
//   };
//
// named_parameters() then gives "fc1.weight", "fc1.bias", "fc2.weight", ...
// as PyTorch names them. Modules hold pointers to their members, so they can
// be neither copied nor moved: build them in place (or in a std::unique_ptr).
#pragma once

#include "../core/tensor.hpp"

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace attn::nn {

class Module {
 public:
  explicit Module(std::string type_name) : type_name_(std::move(type_name)) {}
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  Module(Module&&) = delete;
  Module& operator=(Module&&) = delete;

  // Every parameter of this module and its children, depth first, with dotted names.
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  std::vector<Tensor> parameters() const;
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
  // Parameters and buffers together: what a checkpoint holds (PyTorch's state_dict).
  std::vector<std::pair<std::string, Tensor*>> state() ;
  std::vector<std::pair<std::string, Module*>> named_children() const { return children_; }

  void zero_grad();
  void train(bool on = true);  // also for every child
  void eval() { train(false); }
  bool is_training() const { return training_; }
  std::size_t num_parameters() const;  // total number of trainable values
  Dtype dtype() const;                 // of the first parameter (Float64 if none)
  void to(Dtype dtype);                // converts every parameter and buffer

  const std::string& type_name() const { return type_name_; }
  // One line describing this module's own settings, e.g. "in_features=4, out_features=3".
  virtual std::string extra_repr() const { return ""; }
  // The module tree, one line per module, with parameter shapes.
  std::string str() const;

 protected:
  // Registers a member tensor as a parameter (turning requires_grad on).
  Tensor& register_parameter(const std::string& name, Tensor& parameter);
  Tensor& register_buffer(const std::string& name, Tensor& buffer);
  template <class M>
  M& register_module(const std::string& name, M& child) {
    add_child(name, child);
    return child;
  }

 private:
  void add_child(const std::string& name, Module& child);
  void check_name(const std::string& name) const;
  void collect(const std::string& prefix, std::vector<std::pair<std::string, Tensor*>>& out,
               bool parameters, bool buffers) const;
  void describe(std::ostream& os, const std::string& name, int depth) const;

  std::string type_name_;
  bool training_ = true;
  std::vector<std::pair<std::string, Tensor*>> parameters_;
  std::vector<std::pair<std::string, Tensor*>> buffers_;
  std::vector<std::pair<std::string, Module*>> children_;
};

std::ostream& operator<<(std::ostream& os, const Module& module);

}  // namespace attn::nn
