// attn's threads: how many there are, and how work is shared among them.
//
// As PyTorch's intra-op threads (torch.set_num_threads): one op at a time runs,
// and an op big enough to be worth it splits its work over the threads: a big
// matrix product (core/backend/blas.cpp cuts it into blocks of columns or rows), a stack
// of small products such as attention's per-head ones (core/ops/matmul.cpp), the
// fused additive score, and exp, tanh, sigmoid and Adam over long arrays.
// Everything else runs on the caller's thread. OpenBLAS itself always runs on one
// thread: its own thread pool would compete with attn's (docs/threads.md).
//
// Each thread computes whole output elements, and how the work is cut depends
// only on the sizes and the number of threads: at a given number of threads,
// results are the same bits run after run. At another number they may differ in
// the last bits, as in PyTorch: OpenBLAS picks other kernels for smaller blocks
// (tests/core/test_parallel.cpp checks both).
//
// How many threads: set_num_threads(n), or the environment variable
// ATTN_NUM_THREADS, or else one per core (std::thread::hardware_concurrency).
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>

namespace attn {

// Use `threads` threads (the caller's plus threads - 1 workers); throws
// std::invalid_argument if threads < 1. Not while a parallel_for is running.
void set_num_threads(int threads);
int get_num_threads();

// Elementwise work is cut into pieces of this many values (as PyTorch's grain
// for its elementwise loops): fewer are not worth handing to another thread.
constexpr std::size_t kValuesPerShare = 16384;

// The grain for parallel_for that deals n items of `work` each out evenly, one
// share per thread, or over fewer shares if each would get less than min_work
// (then n itself: one share). Cuts at multiples of a fixed grain would split
// 32 items 25/7 when the grain is 25; this one splits them 16/16.
std::size_t even_grain(std::size_t n, std::size_t work, std::size_t min_work);

namespace detail {
void parallel_for(std::size_t n, std::size_t grain, const std::function<void(std::size_t, std::size_t)>& body);
}

// Calls body(begin, end) on disjoint ranges that together cover [0, n), at most
// one range per thread; the calling thread takes one share itself and returns
// when every range is done. Ranges are cut at multiples of `grain` (the last
// may be shorter). If a body throws, the first exception is rethrown here, once
// every range has finished. Inside a body (or when another thread's
// parallel_for is running), parallel_for runs serially on the calling thread.
template <class Body>
void parallel_for(std::size_t n, std::size_t grain, const Body& body) {
  // One range (most calls: a short row, a small product) runs right here,
  // without building a std::function, which would allocate for a big lambda.
  if (n <= std::max<std::size_t>(grain, 1)) {
    if (n > 0) body(std::size_t{0}, n);
    return;
  }
  detail::parallel_for(n, grain, body);
}

}  // namespace attn
