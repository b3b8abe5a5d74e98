// Optimizer state for checkpoints (declared in optim.hpp): what an optimizer
// has accumulated besides the parameters, so that a resumed run takes exactly
// the steps an uninterrupted one would.
#include "optim.hpp"

#include <algorithm>
#include <map>

namespace attn::nn {

namespace {

// The state as a name -> tensor map, after checking every name is one of `allowed`
// prefixes followed by a parameter number and that the shapes match the parameters.
std::map<std::string, Tensor> checked_state(const char* op, const Optimizer::State& state,
                                            const std::vector<Tensor>& params,
                                            const std::vector<std::string>& prefixes,
                                            const std::vector<std::string>& scalar_prefixes) {
  std::map<std::string, Tensor> out;
  for (const auto& [name, t] : state) {
    const auto dot = name.rfind('.');
    const std::string prefix = dot == std::string::npos ? name : name.substr(0, dot);
    std::size_t i = params.size();
    try {
      if (dot != std::string::npos) i = std::stoul(name.substr(dot + 1));
    } catch (const std::exception&) {
    }
    const bool tensor_entry = std::find(prefixes.begin(), prefixes.end(), prefix) != prefixes.end();
    const bool scalar_entry = std::find(scalar_prefixes.begin(), scalar_prefixes.end(), prefix) != scalar_prefixes.end();
    if ((!tensor_entry && !scalar_entry) || i >= params.size())
      throw ValueError(std::string(op) + "::load_state: unexpected entry '" + name + "' for " +
                       std::to_string(params.size()) + " parameters");
    if (tensor_entry && t.shape() != params[i].shape())
      throw ValueError(std::string(op) + "::load_state: '" + name + "' has shape " + shape_str(t.shape()) +
                       ", parameter " + std::to_string(i) + " has " + shape_str(params[i].shape()));
    out[name] = tensor_entry ? t.detach().to(params[i].dtype()) : t;
  }
  return out;
}

// An independent copy (the optimizer updates its state in place): detach() copies the values.
Tensor copy_of(const Tensor& t) { return t.detach(); }

}  // namespace

void Optimizer::load_state(const State& state) {
  if (!state.empty())
    throw ValueError("Optimizer::load_state: this optimizer keeps no state, got " + std::to_string(state.size()) +
                     " entries");
}

Optimizer::State SGD::state() const {
  State s;
  for (std::size_t i = 0; i < momentum_buffer_.size(); ++i)
    if (momentum_buffer_[i].defined()) s.push_back({"momentum_buffer." + std::to_string(i), copy_of(momentum_buffer_[i])});
  return s;
}

void SGD::load_state(const State& state) {
  auto entries = checked_state("SGD", state, params_, {"momentum_buffer"}, {});
  for (std::size_t i = 0; i < params_.size(); ++i) {
    auto it = entries.find("momentum_buffer." + std::to_string(i));
    momentum_buffer_[i] = it == entries.end() ? Tensor() : copy_of(it->second);
  }
}

Optimizer::State Adam::state() const {
  State s;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (steps_[i] == 0) continue;  // never stepped: nothing to keep
    const std::string n = "." + std::to_string(i);
    s.push_back({"exp_avg" + n, copy_of(exp_avg_[i])});
    s.push_back({"exp_avg_sq" + n, copy_of(exp_avg_sq_[i])});
    s.push_back({"step" + n, Tensor(xt::xarray<double>({static_cast<double>(steps_[i])}))});
  }
  return s;
}

void Adam::load_state(const State& state) {
  auto entries = checked_state(decoupled_ ? "AdamW" : "Adam", state, params_, {"exp_avg", "exp_avg_sq"}, {"step"});
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const std::string n = "." + std::to_string(i);
    const bool has = entries.count("step" + n) && entries.count("exp_avg" + n) && entries.count("exp_avg_sq" + n);
    if (!has && (entries.count("step" + n) || entries.count("exp_avg" + n) || entries.count("exp_avg_sq" + n)))
      throw ValueError(std::string(decoupled_ ? "AdamW" : "Adam") + "::load_state: parameter " + std::to_string(i) +
                       " needs exp_avg, exp_avg_sq and step together");
    exp_avg_[i] = has ? copy_of(entries.at("exp_avg" + n)) : Tensor();
    exp_avg_sq_[i] = has ? copy_of(entries.at("exp_avg_sq" + n)) : Tensor();
    steps_[i] = has ? static_cast<long>(entries.at("step" + n).item()) : 0;
  }
}

}  // namespace attn::nn
