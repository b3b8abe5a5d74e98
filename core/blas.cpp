// The only file that includes OpenBLAS's <cblas.h>: see blas.hpp.
#include "blas.hpp"

#include <cblas.h>

#include <algorithm>

namespace attn::blas {

namespace {

CBLAS_TRANSPOSE flag(bool trans) { return trans ? CblasTrans : CblasNoTrans; }

// BLAS wants every leading dim >= 1, even for empty matrices.
blasint ld(std::size_t n) { return static_cast<blasint>(std::max<std::size_t>(n, 1)); }

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

}  // namespace

void gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha,
          const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
          std::size_t ldc) {
  if (handled_empty(m, n, k, beta, c, ldc)) return;
  cblas_sgemm(CblasRowMajor, flag(trans_a), flag(trans_b), static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), alpha, a, ld(lda), b, ld(ldb), beta, c, ld(ldc));
}

void gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, double alpha,
          const double* a, std::size_t lda, const double* b, std::size_t ldb, double beta, double* c,
          std::size_t ldc) {
  if (handled_empty(m, n, k, beta, c, ldc)) return;
  cblas_dgemm(CblasRowMajor, flag(trans_a), flag(trans_b), static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), alpha, a, ld(lda), b, ld(ldb), beta, c, ld(ldc));
}

void set_num_threads(int threads) { openblas_set_num_threads(threads); }

}  // namespace attn::blas
