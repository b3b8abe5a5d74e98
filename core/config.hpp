// attn's build-wide settings, included before any xtensor header.
//
// XTENSOR_USE_XSIMD turns on SIMD kernels in xtensor. It also changes the
// allocator inside xt::xarray, so it is part of the ABI: libattn and every
// program or notebook that uses it must agree on it. This header makes sure.
#pragma once

#if defined(XTENSOR_CONFIG_HPP) && !defined(XTENSOR_USE_XSIMD)
#error "attn: include attn headers before xtensor ones, or define XTENSOR_USE_XSIMD (libattn is built with it)"
#endif

#ifndef XTENSOR_USE_XSIMD
#define XTENSOR_USE_XSIMD
#endif

#include <xtensor/xarray.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attn {

// Shapes are plain vectors of sizes, e.g. {B, T, D}.
using Shape = std::vector<std::size_t>;

// Integer data (token ids, class targets, argmax results) and boolean masks
// are plain xtensor arrays: they never need gradients.
using Index = xt::xarray<std::int64_t>;
using Mask = xt::xarray<bool>;

// The two scalar types a Tensor can hold. Float64 is the default (exact
// gradient checks, numpy's default); Float32 is there for speed.
enum class Dtype { Float32, Float64 };

const char* dtype_name(Dtype dtype);

template <class T> constexpr Dtype dtype_of();
template <> constexpr Dtype dtype_of<float>() { return Dtype::Float32; }
template <> constexpr Dtype dtype_of<double>() { return Dtype::Float64; }

// Calls f<float>() or f<double>() to match `dtype`: how every op handles both scalar types.
#define ATTN_DISPATCH(dtype, fn, ...) \
  ((dtype) == ::attn::Dtype::Float32 ? fn<float>(__VA_ARGS__) : fn<double>(__VA_ARGS__))

}  // namespace attn
