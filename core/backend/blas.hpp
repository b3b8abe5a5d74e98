// A thin typed wrapper over OpenBLAS's matrix product, gemm.
//
// core/backend/blas.cpp is the only file that includes <cblas.h> (its declarations clash
// with xtensor-blas's headers), so the rest of attn calls BLAS through here.
// Matrices are row-major, as xt::xarray stores them:
//
//   C = alpha * op(A) * op(B) + beta * C
//
// where op(A) is A, or A transposed when trans_a is true. op(A) is [m, k],
// op(B) is [k, n], C is [m, n]; lda, ldb, ldc are the row lengths (leading
// dims) of A, B and C as they are stored, e.g. lda = k for an untransposed A.
// Transposing by the flag costs nothing: no transposed copy is ever made.
//
// A big product is split over attn's threads (core/backend/parallel.hpp), each block
// of C computed by a single-threaded OpenBLAS call.
#pragma once

#include <cstddef>

namespace attn::blas {

void gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha,
          const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
          std::size_t ldc);
void gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, double alpha,
          const double* a, std::size_t lda, const double* b, std::size_t ldb, double beta, double* c,
          std::size_t ldc);

// Whether OpenBLAS has "small matrix" kernels for this CPU (0.3.21: on its
// AVX-512 targets). Where it has, a thin product (at most 32 rows or terms per
// sum) runs as one call per 32 columns, cut alike at any number of threads.
bool has_small_matrix_kernels();

}  // namespace attn::blas
