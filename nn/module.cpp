#include "module.hpp"

#include "../core/errors.hpp"

#include <ostream>
#include <sstream>

namespace attn::nn {

void Module::check_name(const std::string& name) const {
  if (name.empty() || name.find('.') != std::string::npos)
    throw ValueError(type_name_ + ": a parameter or module name must be non-empty and without '.', got '" + name + "'");
  auto taken = [&](const auto& list) {
    for (const auto& entry : list)
      if (entry.first == name) return true;
    return false;
  };
  if (taken(parameters_) || taken(buffers_) || taken(children_))
    throw ValueError(type_name_ + ": the name '" + name + "' is registered twice");
}

Tensor& Module::register_parameter(const std::string& name, Tensor& parameter) {
  check_name(name);
  if (!parameter.defined()) throw ValueError(type_name_ + ": parameter '" + name + "' is undefined");
  parameter.requires_grad_(true);
  parameters_.emplace_back(name, &parameter);
  return parameter;
}

Tensor& Module::register_buffer(const std::string& name, Tensor& buffer) {
  check_name(name);
  buffers_.emplace_back(name, &buffer);
  return buffer;
}

void Module::add_child(const std::string& name, Module& child) {
  check_name(name);
  children_.emplace_back(name, &child);
}

void Module::collect(const std::string& prefix, std::vector<std::pair<std::string, Tensor*>>& out,
                     bool parameters, bool buffers) const {
  if (parameters)
    for (const auto& [name, t] : parameters_) out.emplace_back(prefix + name, t);
  if (buffers)
    for (const auto& [name, t] : buffers_) out.emplace_back(prefix + name, t);
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", out, parameters, buffers);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor*>> found;
  collect("", found, true, false);
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, t] : found) out.emplace_back(name, *t);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (const auto& entry : named_parameters()) out.push_back(entry.second);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers() const {
  std::vector<std::pair<std::string, Tensor*>> found;
  collect("", found, false, true);
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, t] : found)
    if (t->defined()) out.emplace_back(name, *t);
  return out;
}

std::vector<std::pair<std::string, Tensor*>> Module::state() {
  std::vector<std::pair<std::string, Tensor*>> found;
  collect("", found, true, true);
  std::vector<std::pair<std::string, Tensor*>> out;
  for (const auto& entry : found)
    if (entry.second->defined()) out.push_back(entry);
  return out;
}

void Module::zero_grad() {
  for (auto& p : parameters()) p.zero_grad();
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

std::size_t Module::num_parameters() const {
  std::size_t n = 0;
  for (const auto& p : parameters()) n += p.numel();
  return n;
}

Dtype Module::dtype() const {
  auto params = parameters();
  return params.empty() ? Dtype::Float64 : params.front().dtype();
}

void Module::to(Dtype dtype) {
  std::vector<std::pair<std::string, Tensor*>> found;
  collect("", found, true, false);
  for (auto& [name, t] : found) *t = t->detach().to(dtype).requires_grad_(true);
  found.clear();
  collect("", found, false, true);
  for (auto& [name, t] : found)
    if (t->defined()) *t = t->detach().to(dtype);
}

void Module::describe(std::ostream& os, const std::string& name, int depth) const {
  const std::string indent(2 * depth, ' ');
  os << indent << (name.empty() ? "" : "(" + name + "): ") << type_name_ << "(" << extra_repr() << ")";
  for (const auto& [pname, t] : parameters_) os << "\n" << indent << "  " << pname << " " << shape_str(t->shape());
  for (const auto& [cname, child] : children_) {
    os << "\n";
    child->describe(os, cname, depth + 1);
  }
}

std::string Module::str() const {
  std::ostringstream os;
  describe(os, "", 0);
  os << "\n" << num_parameters() << " parameters";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Module& module) { return os << module.str(); }

}  // namespace attn::nn
