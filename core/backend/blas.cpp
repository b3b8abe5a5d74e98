// The only file that includes OpenBLAS's <cblas.h>: see blas.hpp.
#include "blas.hpp"

#include "parallel.hpp"

#include <cblas.h>

#include <algorithm>
#include <string>

namespace attn::blas {

namespace {

CBLAS_TRANSPOSE flag(bool trans) { return trans ? CblasTrans : CblasNoTrans; }

// BLAS wants every leading dim >= 1, even for empty matrices.
blasint ld(std::size_t n) { return static_cast<blasint>(std::max<std::size_t>(n, 1)); }

void cblas_gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
                std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc) {
  cblas_sgemm(CblasRowMajor, flag(trans_a), flag(trans_b), static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), alpha, a, ld(lda), b, ld(ldb), beta, c, ld(ldc));
}

void cblas_gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, double alpha, const double* a,
                std::size_t lda, const double* b, std::size_t ldb, double beta, double* c, std::size_t ldc) {
  cblas_dgemm(CblasRowMajor, flag(trans_a), flag(trans_b), static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), alpha, a, ld(lda), b, ld(ldb), beta, c, ld(ldc));
}

// With nothing to sum over (k == 0) the product is zero: C = beta * C.
// BLAS implementations disagree on this corner, so it is handled here.
template <class T>
bool handled_empty(std::size_t m, std::size_t n, std::size_t k, T beta, T* c, std::size_t ldc) {
  if (m == 0 || n == 0) return true;
  if (k != 0) return false;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
  return true;
}

// attn's threads do the splitting (core/backend/parallel.hpp); OpenBLAS's own pool
// would only compete with them. Set once, before the first product.
void use_one_openblas_thread() {
  static const bool done = (openblas_set_num_threads(1), true);
  (void)done;
}

// Products with fewer multiply-adds than this run on one thread: below it,
// handing half to another thread costs about what it saves (measured in
// docs/threads.md). [32, 128] x [128, 512] has 2M.
constexpr double kSplitAbove = 256 * 1024;
// Rows or columns per block when a product is split: a multiple of the widths
// of OpenBLAS's kernels, so the cuts fall on the edges of its tiles.
constexpr std::size_t kBlock = 32;
// A thin product, with at most this many rows (m) or terms per sum (k), as an
// RNN step's [32, 128] x [128, 512] and its weight gradient [512, 32] x [32, 128],
// runs in one gemm call per 32 columns even on one thread, where OpenBLAS has
// "small matrix" kernels (below): they skip packing, and on an AVX-512 machine
// such a call ran 15-25% faster than the whole product in one call
// (docs/threads.md). With 64 rows, or 64 columns a block, that gain turns into a
// loss, so a product with more rows and terms keeps one call per thread.
constexpr std::size_t kThin = 32;


// C = alpha op(A) op(B) + beta C, split over threads into blocks of C's
// columns (or rows, whichever C has more of). A block of C's columns needs the
// same columns of op(B) and all of op(A): when op(B) is B, those start j
// values into each row of B; when op(B) is B^T, j rows into B. A thin product
// is cut into the same blocks of kBlock columns at any number of threads, so its
// bits do not depend on it.
template <class T>
void gemm_(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, T alpha, const T* a,
           std::size_t lda, const T* b, std::size_t ldb, T beta, T* c, std::size_t ldc) {
  if (handled_empty(m, n, k, beta, c, ldc)) return;
  use_one_openblas_thread();
  if (double(m) * double(n) * double(k) < kSplitAbove) {
    cblas_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  // C[:, j0:j1] = op(A) op(B)[:, j0:j1]:   [m, k] x [k, j1 - j0] -> [m, j1 - j0]
  auto columns = [&](std::size_t j0, std::size_t j1) {
    cblas_gemm(trans_a, trans_b, m, j1 - j0, k, alpha, a, lda, trans_b ? b + j0 * ldb : b + j0, ldb, beta, c + j0, ldc);
  };
  const bool thin = std::min(m, k) <= kThin && has_small_matrix_kernels();
  if (thin) {
    parallel_for(n, kBlock, [&](std::size_t j0, std::size_t j1) {
      for (std::size_t j = j0; j < j1; j += kBlock) columns(j, std::min(j + kBlock, j1));
    });
  } else if (n >= m) {
    parallel_for(n, kBlock, columns);
  } else {
    parallel_for(m, kBlock, [&](std::size_t i0, std::size_t i1) {
      // C[i0:i1, :] = op(A)[i0:i1, :] op(B):   [i1 - i0, k] x [k, n] -> [i1 - i0, n]
      cblas_gemm(trans_a, trans_b, i1 - i0, n, k, alpha, trans_a ? a + i0 : a + i0 * lda, lda, b, ldb, beta,
                 c + i0 * ldc, ldc);
    });
  }
}

}  // namespace

// OpenBLAS 0.3.21 has small-matrix kernels for its SkylakeX and Cooperlake
// targets (AVX-512 CPUs) only; its other targets' permit functions say no. There,
// each 32-column call packs all of op(A) again, and the blocks run slower than
// one call (docs/threads.md, docs/benchmarks.md).
bool has_small_matrix_kernels() {
  static const bool yes = [] {
    const std::string core = openblas_get_corename();
    return core == "SkylakeX" || core == "Cooperlake";
  }();
  return yes;
}

void gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha,
          const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
          std::size_t ldc) {
  gemm_(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, double alpha,
          const double* a, std::size_t lda, const double* b, std::size_t ldb, double beta, double* c,
          std::size_t ldc) {
  gemm_(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace attn::blas
