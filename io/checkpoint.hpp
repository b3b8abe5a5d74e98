// Checkpoints: every parameter and buffer of a module, saved by its dotted
// name in an .npz file (npz.hpp), the format of np.savez:
//
//   attn::io::save(model, "model.npz");   // "fc1.weight", "fc1.bias", ...
//   attn::io::load(model, "model.npz");   // same values, in place
//
//   >>> np.load("model.npz")["fc1.weight"]
//   >>> model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load("model.npz").items()})
//
// A PyTorch state_dict exported the same way loads into the attn module
// whose names and shapes match (tools/reference/checkpoint.py does it).
#pragma once

#include "../nn/module.hpp"

#include <string>
#include <vector>

namespace attn::io {

// Writes module.named_parameters() then module.named_buffers(). Atomic: a
// failed save leaves the previous file at `path` untouched.
void save(const nn::Module& module, const std::string& path);

// Copies the saved values into the module's own tensors, in place: handles
// held elsewhere (an optimizer's) see the new values, requires_grad is kept,
// and values are converted to the module's dtype (float64 <-> float32).
// Everything is checked first, from the zip directory and the .npy headers
// alone (no value is decompressed for it): if the file's names or shapes don't
// match the module, one IOError lists every missing key, every unexpected key
// and every shape mismatch, and nothing is changed. Then every stream is read
// once to check its length and CRC, and only then decompressed straight into
// the module's tensors: the peak memory is the model plus a 64 KiB buffer.
// File problems are IOErrors too (docs/checkpoint-format.md lists them).
//
// With strict = false, as PyTorch's load_state_dict(strict=False), missing and
// unexpected keys are allowed: the keys both have are loaded, the module's
// others keep their values, and the keys left out are returned. A shape
// mismatch still throws (PyTorch's does too). With strict = true both lists
// come back empty.
struct IncompatibleKeys {
  std::vector<std::string> missing_keys;     // in the module, not in the file: left as they were
  std::vector<std::string> unexpected_keys;  // in the file, not in the module: not read
};
IncompatibleKeys load(nn::Module& module, const std::string& path, bool strict = true);

}  // namespace attn::io
