// save / load a module's state as an .npz file, PyTorch's state_dict by name.
#include "checkpoint.hpp"

#include "npz.hpp"
#include "../core/errors.hpp"

#include <map>
#include <set>

namespace attn::io {

namespace {

// "a, b, c"
std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& item : items) s += (s.empty() ? "" : ", ") + item;
  return s;
}

}  // namespace

void save(const nn::Module& module, const std::string& path) {
  auto state = module.named_parameters();
  for (const auto& buffer : module.named_buffers()) state.push_back(buffer);
  for (const auto& [name, t] : state)
    if (!t.defined()) throw ValueError("save: the parameter '" + name + "' is undefined, nothing was written to '" + path + "'");
  save_npz(path, state);
}

IncompatibleKeys load(nn::Module& module, const std::string& path, bool strict) {
  NpzReader file(path);  // the zip directory and every .npy header, checked; no value read yet
  std::map<std::string, std::size_t> saved;  // name -> index in the file
  for (std::size_t i = 0; i < file.size(); ++i) saved.emplace(file.name(i), i);
  const auto state = module.state();

  // 1. Compare names and shapes with the headers, collecting every problem.
  IncompatibleKeys keys;
  std::vector<std::string> mismatched;
  std::set<std::string> wanted;
  for (const auto& [name, t] : state) {
    wanted.insert(name);
    auto found = saved.find(name);
    if (found == saved.end()) keys.missing_keys.push_back(name);
    else if (file.header(found->second).shape != t->shape())
      mismatched.push_back(name + " (checkpoint " + shape_str(file.header(found->second).shape) + ", module " +
                           shape_str(t->shape()) + ")");
  }
  for (const auto& entry : saved)
    if (!wanted.count(entry.first)) keys.unexpected_keys.push_back(entry.first);
  const bool names_differ = !keys.missing_keys.empty() || !keys.unexpected_keys.empty();
  if ((strict && names_differ) || !mismatched.empty()) {
    std::string message = "load: '" + path + "' does not match the " + module.type_name() + " module, nothing was loaded:";
    if (strict && !keys.missing_keys.empty()) message += "\n  missing keys: " + join(keys.missing_keys);
    if (strict && !keys.unexpected_keys.empty()) message += "\n  unexpected keys: " + join(keys.unexpected_keys);
    if (!mismatched.empty()) message += "\n  shape mismatches: " + join(mismatched);
    if (strict && names_differ && mismatched.empty())
      message += "\n  to load the keys both have and skip the others (PyTorch's load_state_dict(strict=False)), "
                 "write io::load(module, path, /*strict=*/false)";
    throw IOError(message);
  }

  // 2. Read every stream to its end once, keeping nothing: a damaged one
  // (CRC, length) is found before any of the module's values is overwritten.
  file.verify();

  // 3. Decompress each array straight into the module's tensor, converted to its dtype.
  for (const auto& [name, t] : state) {
    auto found = saved.find(name);
    if (found == saved.end()) continue;  // a missing key (strict = false): the module's value stays
    try {
      file.read_into(found->second, *t);
    } catch (const IOError& e) {
      throw IOError(std::string(e.what()) + " (the file changed while it was read: the module is partly loaded)");
    }
  }
  return keys;  // both lists empty when strict
}

}  // namespace attn::io
