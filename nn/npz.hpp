// Named tensors in numpy's .npz format, which numpy and PyTorch users can read:
//
//   attn::nn::save_npz("arrays.npz", {{"x", x}, {"y", y}});
//   auto arrays = attn::nn::load_npz("arrays.npz");  // [("x", x), ("y", y)]
//
//   >>> np.load("arrays.npz")["x"]
//
// An .npz is a zip archive holding one .npy file per tensor, named
// "<name>.npy" (npy.hpp), exactly what np.savez(path, x=..., y=...) writes.
// The zip container itself is read and written by libzip.
#pragma once

#include "../core/tensor.hpp"

#include <string>
#include <utility>
#include <vector>

namespace attn::nn {

// Writes the tensors in order, uncompressed as np.savez does. Atomic: the
// archive is written to a temporary file next to `path`, then renamed over
// it, so a failed save leaves the old file intact and no temporary behind.
// Throws ValueError for an empty list, an empty or repeated name or an
// undefined tensor, IOError when the file can't be written.
void save_npz(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors);

// The tensors of an .npz, in the archive's order, named without ".npy".
// A missing, truncated or corrupted file, or one holding anything but .npy
// arrays attn can read (see from_npy), throws an IOError naming the file.
std::vector<std::pair<std::string, Tensor>> load_npz(const std::string& path);

}  // namespace attn::nn
