// One array in numpy's .npy format, the files inside an .npz (see npz.hpp).
//
// A .npy file is a short text header followed by the raw values:
//
//   \x93NUMPY  1 0  <header length, 2 bytes little-endian>
//   {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }      \n
//   <6 float64 values, little-endian, row-major>
//
// The header is a Python dict literal padded with spaces so that the values
// start at a multiple of 64 bytes. 'descr' is the element type: '<f8' is a
// little-endian 8-byte float (float64), '<f4' a float32, '<i8' an int64.
#pragma once

#include "../core/array_spec.hpp"
#include "../core/tensor.hpp"

#include <string>

namespace attn::io {

// The bytes of a .npy file (version 1.0) holding t's values:
// '<f8' for a Float64 tensor, '<f4' for a Float32 one.
std::string to_npy(const Tensor& t);

// What a .npy header says, read before any value (npz.cpp checks it against
// the zip directory and the module before decompressing the data).
struct NpyHeader {
  std::string descr;            // '<f8', '<f4', '<i8' or '<i4'
  Shape shape;
  std::size_t data_offset = 0;  // where the values start: preamble + header
  std::size_t item_size = 0;    // bytes per value
  std::size_t data_bytes = 0;   // item_size * numel (overflow refused)
  Dtype dtype() const { return descr == "<f4" ? Dtype::Float32 : Dtype::Float64; }  // integers load as Float64
  std::size_t numel() const { return item_size ? data_bytes / item_size : 0; }
};

// The longest header attn reads (numpy's own limit is 10000 bytes).
constexpr std::size_t kMaxNpyHeader = 65535;

// Where the values start, from the file's first 12 bytes (or fewer, if the
// file is shorter): the magic, the version and the header's length. Throws
// an IOError starting with `where` for a bad magic, version or length.
std::size_t npy_data_offset(const std::string& first_bytes, const std::string& where);

// Parses the header from the file's first npy_data_offset() bytes and checks
// it: a known dtype, C order, a shape whose byte count does not overflow.
NpyHeader parse_npy_header(const std::string& head, const std::string& where);

// Converts `count` stored values at `p` (little-endian, header.descr) into
// dest's flat values [first, first + count), in dest's own dtype.
void decode_npy_values(const NpyHeader& header, const char* p, std::size_t count, Tensor& dest, std::size_t first);

// The tensor a .npy file holds. '<f8' and '<f4' keep their dtype; integer
// arrays ('<i8', '<i4') become Float64 tensors. Reads versions 1.0 to 3.0.
// Anything else (bad magic, a header that doesn't parse, big-endian or other
// dtypes, fortran_order True, too few or too many bytes) throws an IOError
// that starts with `where`, e.g. "model.npz: fc.weight.npy".
Tensor from_npy(const std::string& bytes, const std::string& where);

}  // namespace attn::io
