// Optimizer state for checkpoints (declared in optim.hpp): what an optimizer
// has accumulated besides the parameters, so that a resumed run takes exactly
// the steps an uninterrupted one would.
#include "optim.hpp"

#include <algorithm>
#include <map>

namespace attn::nn {

namespace {

// An entry's name split into its prefix and parameter number: "exp_avg.3" -> ("exp_avg", 3).
// The number is params.size() when it is missing or not a number.
std::pair<std::string, std::size_t> split_name(const std::string& name, std::size_t n_params) {
  const auto dot = name.rfind('.');
  if (dot == std::string::npos) return {name, n_params};
  std::size_t i = n_params;
  try {
    i = std::stoul(name.substr(dot + 1));
  } catch (const std::exception&) {
  }
  return {name.substr(0, dot), i};
}

bool contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

// What an entry must be: a tensor entry has parameter i's shape and dtype, a
// scalar entry (a step count) is one float64.
ArraySpec entry_spec(const char* op, const std::string& name, const std::vector<Tensor>& params,
                     const std::vector<std::string>& prefixes, const std::vector<std::string>& scalar_prefixes) {
  const auto [prefix, i] = split_name(name, params.size());
  const bool tensor_entry = contains(prefixes, prefix);
  if ((!tensor_entry && !contains(scalar_prefixes, prefix)) || i >= params.size())
    throw ValueError(std::string(op) + "::load_state: unexpected entry '" + name + "' for " +
                     std::to_string(params.size()) + " parameters");
  if (tensor_entry) return {params[i].shape(), params[i].dtype()};
  return {{1}, Dtype::Float64};
}

// The values kept: a tensor nothing else holds (handed over with std::move,
// e.g. just read from a file) as it is, anything else as a copy, since the
// optimizer updates its state in place.
Tensor keep(Tensor t) {
  if (t.node().use_count() == 1 && t.is_leaf() && !t.requires_grad()) return t;
  return t.detach();  // detach() copies the values
}

// The state as a name -> tensor map, after checking every name is one of `allowed`
// prefixes followed by a parameter number and that the shapes match the parameters.
std::map<std::string, Tensor> checked_state(const char* op, Optimizer::State state, const std::vector<Tensor>& params,
                                            const std::vector<std::string>& prefixes,
                                            const std::vector<std::string>& scalar_prefixes) {
  std::map<std::string, Tensor> out;
  for (auto& [name, t] : state) {
    const ArraySpec spec = entry_spec(op, name, params, prefixes, scalar_prefixes);
    const bool tensor_entry = contains(prefixes, split_name(name, params.size()).first);
    if (tensor_entry && t.shape() != spec.shape)
      throw ValueError(std::string(op) + "::load_state: '" + name + "' has shape " + shape_str(t.shape()) +
                       ", parameter " + name.substr(name.rfind('.') + 1) + " has " + shape_str(spec.shape));
    Tensor value = std::move(t);  // the list's handle is dropped, so a moved-in tensor is held once
    out[name] = tensor_entry ? value.to(spec.dtype) : value;
  }
  return out;
}

}  // namespace

void Optimizer::restore_state(State state) {
  if (!state.empty())
    throw ValueError("Optimizer::load_state: this optimizer keeps no state, got " + std::to_string(state.size()) +
                     " entries");
}

ArraySpec Optimizer::state_spec(const std::string& name) const {
  throw ValueError("Optimizer::load_state: this optimizer keeps no state, got '" + name + "'");
}

Optimizer::State SGD::state() const {
  State s;
  for (std::size_t i = 0; i < momentum_buffer_.size(); ++i)
    if (momentum_buffer_[i].defined()) s.push_back({"momentum_buffer." + std::to_string(i), momentum_buffer_[i].detach()});
  return s;
}

ArraySpec SGD::state_spec(const std::string& name) const {
  return entry_spec("SGD", name, params_, {"momentum_buffer"}, {});
}

void SGD::restore_state(State state) {
  auto entries = checked_state("SGD", std::move(state), params_, {"momentum_buffer"}, {});
  for (std::size_t i = 0; i < params_.size(); ++i) {
    auto it = entries.find("momentum_buffer." + std::to_string(i));
    momentum_buffer_[i] = it == entries.end() ? Tensor() : keep(std::move(it->second));
  }
}

Optimizer::State Adam::state() const {
  State s;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (steps_[i] == 0) continue;  // never stepped: nothing to keep
    const std::string n = "." + std::to_string(i);
    s.push_back({"exp_avg" + n, exp_avg_[i].detach()});
    s.push_back({"exp_avg_sq" + n, exp_avg_sq_[i].detach()});
    s.push_back({"step" + n, Tensor(xt::xarray<double>({static_cast<double>(steps_[i])}))});
  }
  return s;
}

ArraySpec Adam::state_spec(const std::string& name) const {
  return entry_spec(decoupled_ ? "AdamW" : "Adam", name, params_, {"exp_avg", "exp_avg_sq"}, {"step"});
}

void Adam::restore_state(State state) {
  const char* op = decoupled_ ? "AdamW" : "Adam";
  auto entries = checked_state(op, std::move(state), params_, {"exp_avg", "exp_avg_sq"}, {"step"});
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const std::string n = "." + std::to_string(i);
    const bool has = entries.count("step" + n) && entries.count("exp_avg" + n) && entries.count("exp_avg_sq" + n);
    if (!has && (entries.count("step" + n) || entries.count("exp_avg" + n) || entries.count("exp_avg_sq" + n)))
      throw ValueError(std::string(op) + "::load_state: parameter " + std::to_string(i) +
                       " needs exp_avg, exp_avg_sq and step together");
    exp_avg_[i] = has ? keep(std::move(entries.at("exp_avg" + n))) : Tensor();
    exp_avg_sq_[i] = has ? keep(std::move(entries.at("exp_avg_sq" + n))) : Tensor();
    steps_[i] = has ? static_cast<long>(entries.at("step" + n).item()) : 0;
  }
}

}  // namespace attn::nn
