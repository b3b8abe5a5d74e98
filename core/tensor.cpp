#include "tensor.hpp"

#include <xtensor/xio.hpp>

#include <ostream>

namespace attn {

namespace {
thread_local bool g_grad_enabled = true;
}

bool is_grad_enabled() { return g_grad_enabled; }
no_grad::no_grad() : previous_(g_grad_enabled) { g_grad_enabled = false; }
no_grad::~no_grad() { g_grad_enabled = previous_; }

Tensor::Tensor(xt::xarray<double> value, bool requires_grad)
    : node_(std::make_shared<Node<double>>("leaf", std::move(value), requires_grad, true)) {}
Tensor::Tensor(xt::xarray<float> value, bool requires_grad)
    : node_(std::make_shared<Node<float>>("leaf", std::move(value), requires_grad, true)) {}

NodeBase& Tensor::checked_node(const char* what) const {
  if (!node_) throw ValueError(std::string(what) + ": the tensor is undefined (default-constructed)");
  return *node_;
}

Dtype Tensor::dtype() const { return checked_node("dtype").dtype(); }
Shape Tensor::shape() const { return checked_node("shape").shape(); }
std::size_t Tensor::dim() const { return checked_node("dim").dim(); }
std::size_t Tensor::numel() const { return checked_node("numel").numel(); }
std::size_t Tensor::size(long d) const { return checked_node("size").size(normalize_dim(d, dim(), "size")); }
bool Tensor::requires_grad() const { return node_ && node_->requires_grad; }
bool Tensor::is_leaf() const { return checked_node("is_leaf").is_leaf; }
std::string Tensor::op() const { return checked_node("op").op; }

Tensor& Tensor::requires_grad_(bool on) {
  NodeBase& n = checked_node("requires_grad_");
  if (!n.is_leaf)
    throw GraphError(std::string("requires_grad_: only leaf tensors can change requires_grad; this one was made by '") +
                     n.op + "' (use detach() first)");
  n.requires_grad = on;
  return *this;
}

template <class T>
xt::xarray<T>& Tensor::data() {
  NodeBase& n = checked_node("data");
  if (n.dtype() != dtype_of<T>())
    throw ValueError(std::string("data: the tensor holds ") + dtype_name(n.dtype()) + ", not " +
                     dtype_name(dtype_of<T>()));
  return static_cast<Node<T>&>(n).value;
}
template <class T>
const xt::xarray<T>& Tensor::data() const {
  return const_cast<Tensor*>(this)->data<T>();
}
template xt::xarray<float>& Tensor::data<float>();
template xt::xarray<double>& Tensor::data<double>();
template const xt::xarray<float>& Tensor::data<float>() const;
template const xt::xarray<double>& Tensor::data<double>() const;

xt::xarray<double> Tensor::to_array() const {
  if (dtype() == Dtype::Float64) return data<double>();
  return xt::cast<double>(data<float>());
}

double Tensor::item() const {
  if (numel() != 1)
    throw ShapeError("item: expected a tensor with one element, got shape " + shape_str(shape()));
  return to_array().flat(0);
}

namespace {
template <class T>
Tensor grad_of(NodeBase& n) {
  auto& node = static_cast<Node<T>&>(n);
  return Tensor(node.grad);
}
}  // namespace

Tensor Tensor::grad() const {
  NodeBase& n = checked_node("grad");
  if (!n.has_grad) return Tensor();
  return ATTN_DISPATCH(n.dtype(), grad_of, n);
}

void Tensor::zero_grad() { checked_node("zero_grad").clear_grad(); }
void Tensor::retain_grad() { checked_node("retain_grad").retains_grad = true; }

namespace {
template <class T>
Tensor detach_as(const Tensor& t) { return Tensor(t.data<T>()); }

}  // namespace

Tensor Tensor::detach() const { return ATTN_DISPATCH(dtype(), detach_as, *this); }

Tensor tensor(const xt::xarray<double>& values, bool requires_grad, Dtype dtype) {
  if (dtype == Dtype::Float64) return Tensor(values, requires_grad);
  return Tensor(xt::xarray<float>(xt::cast<float>(values)), requires_grad);
}

Tensor full(const Shape& shape, double value, Dtype dtype, bool requires_grad) {
  if (dtype == Dtype::Float64) return Tensor(filled(shape, value), requires_grad);
  return Tensor(filled(shape, static_cast<float>(value)), requires_grad);
}
Tensor zeros(const Shape& shape, Dtype dtype, bool requires_grad) { return full(shape, 0.0, dtype, requires_grad); }
Tensor ones(const Shape& shape, Dtype dtype, bool requires_grad) { return full(shape, 1.0, dtype, requires_grad); }
Tensor zeros(const Shape& shape, bool requires_grad, Dtype dtype) { return full(shape, 0.0, dtype, requires_grad); }
Tensor ones(const Shape& shape, bool requires_grad, Dtype dtype) { return full(shape, 1.0, dtype, requires_grad); }
Tensor full(const Shape& shape, double value, bool requires_grad, Dtype dtype) {
  return full(shape, value, dtype, requires_grad);
}
Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), t.dtype()); }
Tensor ones_like(const Tensor& t) { return ones(t.shape(), t.dtype()); }
Tensor arange(std::size_t n, Dtype dtype) {
  return tensor(xt::arange<double>(static_cast<double>(n)), false, dtype);
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "tensor(undefined)";
  os << "tensor(";
  if (t.dtype() == Dtype::Float64) os << t.data<double>();
  else os << t.data<float>();
  os << ", shape=" << shape_str(t.shape());
  if (t.dtype() == Dtype::Float32) os << ", dtype=float32";
  if (t.requires_grad()) os << ", requires_grad=true";
  if (!t.is_leaf()) os << ", op=" << t.op();
  return os << ")";
}

}  // namespace attn
