// save / load a module's state as an .npz file, PyTorch's state_dict by name.
#include "checkpoint.hpp"

#include "npz.hpp"
#include "../core/errors.hpp"

#include <map>
#include <set>

namespace attn::nn {

namespace {

// "a, b, c"
std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& item : items) s += (s.empty() ? "" : ", ") + item;
  return s;
}

}  // namespace

void save(const Module& module, const std::string& path) {
  auto state = module.named_parameters();
  for (const auto& buffer : module.named_buffers()) state.push_back(buffer);
  for (const auto& [name, t] : state)
    if (!t.defined()) throw ValueError("save: the parameter '" + name + "' is undefined, nothing was written to '" + path + "'");
  save_npz(path, state);
}

void load(Module& module, const std::string& path) {
  std::map<std::string, Tensor> saved;
  for (const auto& [name, t] : load_npz(path)) saved.emplace(name, t);
  const auto state = module.state();

  // 1. Compare names and shapes, collecting every problem.
  std::vector<std::string> missing, unexpected, mismatched;
  std::set<std::string> wanted;
  for (const auto& [name, t] : state) {
    wanted.insert(name);
    auto found = saved.find(name);
    if (found == saved.end()) missing.push_back(name);
    else if (found->second.shape() != t->shape())
      mismatched.push_back(name + " (checkpoint " + shape_str(found->second.shape()) + ", module " +
                           shape_str(t->shape()) + ")");
  }
  for (const auto& entry : saved)
    if (!wanted.count(entry.first)) unexpected.push_back(entry.first);
  if (!missing.empty() || !unexpected.empty() || !mismatched.empty()) {
    std::string message = "load: '" + path + "' does not match the " + module.type_name() + " module, nothing was loaded:";
    if (!missing.empty()) message += "\n  missing keys: " + join(missing);
    if (!unexpected.empty()) message += "\n  unexpected keys: " + join(unexpected);
    if (!mismatched.empty()) message += "\n  shape mismatches: " + join(mismatched);
    throw IOError(message);
  }

  // 2. Copy every value into the module's tensor, in its dtype.
  for (const auto& [name, t] : state) {
    const Tensor& value = saved.at(name);
    if (t->dtype() == value.dtype()) {
      if (t->dtype() == Dtype::Float64) t->data<double>() = value.data<double>();
      else t->data<float>() = value.data<float>();
    } else if (t->dtype() == Dtype::Float64) {
      t->data<double>() = xt::cast<double>(value.data<float>());
    } else {
      t->data<float>() = xt::cast<float>(value.data<double>());  // rounds to nearest float
    }
  }
}

}  // namespace attn::nn
