// attn::Tensor: a cheap-to-copy handle to a node of the computation graph.
//
//   Tensor x = attn::tensor({{1.0, 2.0}, {3.0, 4.0}}, /*requires_grad=*/true);
//   Tensor y = attn::sum(attn::tanh(x));
//   y.backward();
//   x.grad();  // dy/dx = 1 - tanh(x)^2
//
// Copies share the node, as Python names share an object.
#pragma once

#include "config.hpp"
#include "node.hpp"

#include <iosfwd>
#include <memory>
#include <string>

namespace attn {

class Tensor {
 public:
  Tensor() = default;  // undefined, like None: see defined()
  explicit Tensor(xt::xarray<double> value, bool requires_grad = false);
  explicit Tensor(xt::xarray<float> value, bool requires_grad = false);
  explicit Tensor(std::shared_ptr<NodeBase> node) : node_(std::move(node)) {}

  bool defined() const { return node_ != nullptr; }
  Dtype dtype() const;
  Shape shape() const;
  std::size_t dim() const;
  std::size_t numel() const;
  std::size_t size(long dim) const;  // negative dims count from the end

  bool requires_grad() const;
  Tensor& requires_grad_(bool requires_grad = true);  // leaves only
  bool is_leaf() const;
  std::string op() const;  // how it was made: "leaf", "add", "matmul", ...

  // The values. data<T>() checks that T matches dtype().
  template <class T> xt::xarray<T>& data();
  template <class T> const xt::xarray<T>& data() const;
  xt::xarray<double> to_array() const;  // a copy, in double whatever the dtype
  double item() const;                  // the value of a one-element tensor

  // Gradients.
  Tensor grad() const;  // undefined until backward reaches this tensor
  void zero_grad();     // forget the gradient (PyTorch's set_to_none)
  void retain_grad();   // keep the gradient of a non-leaf too
  void backward(bool retain_graph = false);
  void backward(const Tensor& grad_output, bool retain_graph = false);

  Tensor detach() const;      // same values, cut from the graph
  Tensor to(Dtype dtype) const;  // differentiable cast

  const std::shared_ptr<NodeBase>& node() const { return node_; }

 private:
  NodeBase& checked_node(const char* what) const;
  std::shared_ptr<NodeBase> node_;
};

// Factories. A brace list gives the values: attn::tensor({{1.0, 2.0}, {3.0, 4.0}}).
Tensor tensor(const xt::xarray<double>& values, bool requires_grad = false,
              Dtype dtype = Dtype::Float64);
Tensor zeros(const Shape& shape, Dtype dtype = Dtype::Float64, bool requires_grad = false);
Tensor ones(const Shape& shape, Dtype dtype = Dtype::Float64, bool requires_grad = false);
Tensor full(const Shape& shape, double value, Dtype dtype = Dtype::Float64,
            bool requires_grad = false);
// PyTorch's order too: zeros({2, 3}, /*requires_grad=*/true), dtype after it.
Tensor zeros(const Shape& shape, bool requires_grad, Dtype dtype = Dtype::Float64);
Tensor ones(const Shape& shape, bool requires_grad, Dtype dtype = Dtype::Float64);
Tensor full(const Shape& shape, double value, bool requires_grad, Dtype dtype = Dtype::Float64);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor arange(std::size_t n, Dtype dtype = Dtype::Float64);  // 0, 1, ..., n-1

// Prints like PyTorch: tensor({{1., 2.}}, requires_grad=true, op=add).
std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Gradient recording on or off for this thread. Inside a no_grad scope ops
// record nothing (evaluation, optimizer updates):
//   { attn::no_grad guard; model.forward(x); }
bool is_grad_enabled();
class no_grad {
 public:
  no_grad();
  ~no_grad();
  no_grad(const no_grad&) = delete;
  no_grad& operator=(const no_grad&) = delete;

 private:
  bool previous_;
};

}  // namespace attn
