// Named tensors in numpy's .npz format, which numpy and PyTorch users can read:
//
//   attn::io::save_npz("arrays.npz", {{"x", x}, {"y", y}});
//   auto arrays = attn::io::load_npz("arrays.npz");  // [("x", x), ("y", y)]
//
//   >>> np.load("arrays.npz")["x"]
//
// An .npz is a zip archive holding one .npy file per tensor, named
// "<name>.npy" (npy.hpp), exactly what np.savez(path, x=..., y=...) writes.
// The zip container itself is read and written by libzip.
#pragma once

#include "npy.hpp"
#include "../core/tensor.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attn::io {

// Writes the tensors in order, uncompressed as np.savez does. Atomic: the
// archive is written to a temporary file next to `path`, then renamed over
// it, so a failed save leaves the old file intact and no temporary behind.
// Throws ValueError for an empty list, an empty or repeated name or an
// undefined tensor, IOError when the file can't be written.
void save_npz(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors);

// The tensors of an .npz, in the archive's order, named without ".npy".
// A missing, truncated or corrupted file, or one holding anything but .npy
// arrays attn can read (see from_npy), throws an IOError naming the file.
// Each array is allocated at the size its header declares once that size is
// checked against the zip directory; an allocation that fails is an IOError
// naming the array, not a std::bad_alloc.
std::vector<std::pair<std::string, Tensor>> load_npz(const std::string& path);

// Only the arrays `spec` wants, each checked against what spec(name) returns
// before any data is read: a different shape is an IOError naming the file,
// the array, the expected and the found shape. Arrays for which spec returns
// nullopt are skipped unread; an exception from spec is rethrown as an
// IOError naming the file and the array.
std::vector<std::pair<std::string, Tensor>> load_npz(
    const std::string& path, const std::function<std::optional<ArraySpec>(const std::string& name)>& spec);

// An open .npz whose directory and every array's .npy header have been read
// and checked (io/checkpoint.cpp uses it to compare a file with a module before
// reading any value). For each member, in this order: its name is
// "<name>.npy" and not repeated; it is stored or deflated and not encrypted;
// its compressed size can hold its declared size (stored: equal, deflated: at
// most 1032 times larger); its .npy header parses; and the zip directory's
// size equals the header's plus the data bytes the header's shape needs.
// Reading values never goes past that size.
class NpzReader {
 public:
  explicit NpzReader(const std::string& path);
  ~NpzReader();
  NpzReader(const NpzReader&) = delete;
  NpzReader& operator=(const NpzReader&) = delete;

  const std::string& path() const { return path_; }
  std::size_t size() const { return headers_.size(); }
  const std::string& name(std::size_t i) const { return names_.at(i); }  // without ".npy"
  const NpyHeader& header(std::size_t i) const { return headers_.at(i); }
  std::string where(std::size_t i) const;  // "<path>: <name>.npy", for messages

  // Decompresses array i straight into dest, which must have its shape
  // (any dtype: values are converted), through a 64 KiB buffer. A stream
  // that ends early, runs long or fails its CRC is an IOError naming it.
  void read_into(std::size_t i, Tensor& dest);

  // A new tensor holding array i, in the header's dtype or `dtype`.
  Tensor read(std::size_t i, std::optional<Dtype> dtype = std::nullopt);

  // Reads every array's stream to its end, keeping nothing: checks lengths
  // and CRCs before anything is overwritten (io::load).
  void verify();

 private:
  struct Archive;
  // Calls `chunk(bytes, n)` for array i's data, n a whole number of values.
  void stream(std::size_t i, const std::function<void(const char*, std::size_t)>& chunk);
  std::string path_;
  std::unique_ptr<Archive> archive_;
  std::vector<std::string> names_;
  std::vector<NpyHeader> headers_;
};

}  // namespace attn::io
