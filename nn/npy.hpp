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

#include "../core/tensor.hpp"

#include <string>

namespace attn::nn {

// The bytes of a .npy file (version 1.0) holding t's values:
// '<f8' for a Float64 tensor, '<f4' for a Float32 one.
std::string to_npy(const Tensor& t);

// The tensor a .npy file holds. '<f8' and '<f4' keep their dtype; integer
// arrays ('<i8', '<i4') become Float64 tensors. Reads versions 1.0 to 3.0.
// Anything else (bad magic, a header that doesn't parse, big-endian or other
// dtypes, fortran_order True, too few or too many bytes) throws an IOError
// that starts with `where`, e.g. "model.npz: fc.weight.npy".
Tensor from_npy(const std::string& bytes, const std::string& where);

}  // namespace attn::nn
