// attn's threads (core/parallel.hpp): parallel_for covers its range exactly
// once and passes exceptions on; products split over threads (core/blas.cpp,
// matmul's stacks of products) give the same bits run after run, and the same
// values to rounding at any number of threads.
#include "../helpers.hpp"

#include "core/backend/blas.hpp"
#include "core/backend/parallel.hpp"
#include "core/backend/vecmath.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

// Restores the number of threads a test changed.
struct ThreadsFor {
  int before = attn::get_num_threads();
  explicit ThreadsFor(int threads) { attn::set_num_threads(threads); }
  ~ThreadsFor() { attn::set_num_threads(before); }
};

// The ranges parallel_for hands out, sorted.
std::vector<std::pair<std::size_t, std::size_t>> ranges_of(std::size_t n, std::size_t grain) {
  std::mutex mutex;
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  attn::parallel_for(n, grain, [&](std::size_t begin, std::size_t end) {
    std::lock_guard<std::mutex> lock(mutex);
    ranges.emplace_back(begin, end);
  });
  std::sort(ranges.begin(), ranges.end());
  return ranges;
}

}  // namespace

// First, before any test sets the number: meson runs this file again with
// ATTN_NUM_THREADS=3 and with ATTN_NUM_THREADS=two (tests/meson.build).
TEST_CASE("the default number of threads: ATTN_NUM_THREADS, else one per core") {
  const char* env = std::getenv("ATTN_NUM_THREADS");
  if (env == nullptr) {
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    CHECK(attn::get_num_threads() == (cores == 0 ? 1 : cores));
  } else if (std::string(env) == "3") {
    CHECK(attn::get_num_threads() == 3);
  } else {
    CHECK_THROWS_WITH_AS(attn::get_num_threads(),
                         ("ATTN_NUM_THREADS: expected a whole number from 1 to 1024, got '" + std::string(env) + "'")
                             .c_str(),
                         std::invalid_argument);
  }
}

TEST_CASE("set_num_threads refuses fewer than one thread") {
  CHECK_THROWS_WITH_AS(attn::set_num_threads(0), "set_num_threads: expected at least 1 thread, got 0",
                       std::invalid_argument);
  CHECK_THROWS_AS(attn::set_num_threads(-2), std::invalid_argument);
  ThreadsFor three(3);
  CHECK(attn::get_num_threads() == 3);
}

TEST_CASE("parallel_for covers [0, n) once, in ranges cut at multiples of grain") {
  for (int threads : {1, 2, 3, 4}) {
    ThreadsFor set(threads);
    for (std::size_t n : {0, 1, 2, 5, 31, 32, 33, 100, 1000}) {
      for (std::size_t grain : {1, 8, 32}) {
        CAPTURE(threads);
        CAPTURE(n);
        CAPTURE(grain);
        const auto ranges = ranges_of(n, grain);
        std::size_t expect_begin = 0;
        for (const auto& [begin, end] : ranges) {
          CHECK(begin == expect_begin);
          CHECK(begin < end);
          CHECK(begin % grain == 0);
          expect_begin = end;
        }
        CHECK(expect_begin == n);
        const std::size_t units = (n + grain - 1) / grain;
        CHECK(ranges.size() == std::min<std::size_t>(units, static_cast<std::size_t>(threads)));
      }
    }
  }
}

TEST_CASE("parallel_for runs on several threads, and serially when nested") {
  ThreadsFor two(2);
  // Range 0 waits (up to 10 s) until range 1 has started: only a second thread
  // can start it meanwhile, since the caller runs its ranges one after another.
  std::atomic<bool> second_started{false};
  std::mutex mutex;
  std::vector<std::thread::id> ids;
  attn::parallel_for(2, 1, [&](std::size_t begin, std::size_t) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      ids.push_back(std::this_thread::get_id());
    }
    if (begin == 1) second_started = true;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (begin == 0 && !second_started && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    std::vector<long> inner;
    std::mutex inner_mutex;
    attn::parallel_for(10, 1, [&](std::size_t b, std::size_t e) {
      std::lock_guard<std::mutex> lock(inner_mutex);
      inner.push_back(static_cast<long>(e - b));
    });
    CHECK(inner == std::vector<long>{10});  // nested: one range, on this thread
  });
  REQUIRE(ids.size() == 2);
  CHECK(ids[0] != ids[1]);
}

TEST_CASE("an exception in parallel_for's body reaches the caller, and the pool still works") {
  ThreadsFor two(2);
  CHECK_THROWS_WITH_AS(attn::parallel_for(100, 1,
                                          [](std::size_t begin, std::size_t) {
                                            if (begin > 0) throw std::runtime_error("range after 0");
                                          }),
                       "range after 0", std::runtime_error);
  const auto ranges = ranges_of(100, 1);
  REQUIRE(ranges.size() == 2);
  CHECK(ranges.back().second == 100);
}

TEST_CASE("even_grain deals items out evenly, in shares worth their minimum work") {
  {
    ThreadsFor two(2);
    CHECK(attn::even_grain(32, 5120, 64 * 1024) == 16);  // Bahdanau's context products: 16 and 16, not 25 and 7
    CHECK(attn::even_grain(32, 1000, 64 * 1024) == 32);  // too little work for two shares: one
    CHECK(attn::even_grain(33, 1 << 20, 1) == 17);        // 17 and 16
    CHECK(attn::even_grain(0, 10, 10) == 1);              // never 0
    const auto ranges = ranges_of(32, attn::even_grain(32, 5120, 64 * 1024));
    REQUIRE(ranges.size() == 2);
    CHECK(ranges[0].second - ranges[0].first == 16);
  }
  ThreadsFor three(3);
  CHECK(attn::even_grain(32, 5120, 64 * 1024) == 16);  // worth two shares, not three
  CHECK(attn::even_grain(32, 1 << 20, 1) == 11);       // 11, 11 and 10
}

TEST_CASE("get_num_threads inside parallel_for's body answers (it takes no lock)") {
  ThreadsFor two(2);
  std::atomic<int> answers{0};
  attn::parallel_for(2, 1, [&](std::size_t, std::size_t) {
    if (attn::get_num_threads() == 2) ++answers;
  });
  CHECK(answers == 2);
}

TEST_CASE("set_num_threads inside parallel_for is refused") {
  ThreadsFor two(2);
  std::atomic<int> refused{0};
  attn::parallel_for(2, 1, [&](std::size_t, std::size_t) {
    try {
      attn::set_num_threads(1);
    } catch (const std::logic_error& e) {
      if (std::string(e.what()) == "set_num_threads: called inside a parallel_for") ++refused;
    }
  });
  CHECK(refused == 2);
  CHECK(attn::get_num_threads() == 2);
}

namespace {

// Products `f` at 1 thread, then twice at 2 and at 3: the same bits at the
// same number of threads, the same values to rounding (float64) at another.
template <class F>
void same_at_any_threads(F f) {
  std::vector<attn::Tensor> one;
  {
    ThreadsFor set(1);
    one = f();
  }
  for (int threads : {2, 3}) {
    CAPTURE(threads);
    ThreadsFor set(threads);
    const std::vector<attn::Tensor> many = f(), again = f();
    REQUIRE(many.size() == one.size());
    for (std::size_t i = 0; i < one.size(); ++i) {
      CAPTURE(i);
      CHECK(test::allclose(many[i], again[i], 0.0));
      const double scale = std::max(1.0, xt::amax(xt::abs(one[i].to_array()))());
      CHECK(test::allclose(many[i], one[i], 1e-13 * scale));
    }
  }
}

}  // namespace

TEST_CASE("gemm split over threads: every transpose, and shapes that split by columns or by rows") {
  // Shapes around the split threshold, columns and rows not multiples of the
  // block, and each way to split (more columns, more rows).
  const std::vector<std::array<std::size_t, 3>> shapes{{32, 512, 128}, {512, 32, 128}, {100, 333, 77},
                                                        {257, 65, 129}, {8, 1000, 40},  {1000, 8, 40},
                                                        {512, 128, 32}, {20, 700, 300}};
  for (const auto& [m, n, k] : shapes) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        CAPTURE(m);
        CAPTURE(n);
        CAPTURE(k);
        CAPTURE(ta);
        CAPTURE(tb);
        auto run = [&] {
          const attn::Tensor A = test::randn(ta ? attn::Shape{k, m} : attn::Shape{m, k}, 1, false);
          const attn::Tensor B = test::randn(tb ? attn::Shape{n, k} : attn::Shape{k, n}, 2, false);
          attn::Tensor C = test::randn({m, n}, 3, false);  // beta = 0.5 reads it
          const auto av = A.to_array(), bv = B.to_array();
          auto cv = C.to_array();
          attn::blas::gemm(ta, tb, m, n, k, 1.5, av.data(), ta ? m : k, bv.data(), tb ? k : n, 0.5, cv.data(), n);
          return std::vector<attn::Tensor>{attn::Tensor(cv)};
        };
        same_at_any_threads(run);
      }
    }
  }
}

TEST_CASE("a thin product (m or k at most 32): right, and where it runs in blocks, the same bits at any threads") {
  // [32, 128] x [128, 512] (an LSTM step), its dW shape [512, 32] x [32, 128], and
  // one with a last block shorter than 32: against a plain triple loop, and with
  // OpenBLAS's small-matrix kernels the same bits at 1, 2 and 3 threads
  // (core/blas.cpp cuts them alike); without them, the same values to rounding.
  const std::vector<std::array<std::size_t, 3>> shapes{{32, 512, 128}, {512, 128, 32}, {17, 1000, 300}};
  for (const auto& [m, n, k] : shapes) {
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(k);
    const auto a = test::randn({m, k}, 1, false).to_array(), b = test::randn({k, n}, 2, false).to_array();
    auto run = [&](int threads) {
      ThreadsFor set(threads);
      xt::xarray<double> c = xt::zeros<double>({m, n});
      attn::blas::gemm(false, false, m, n, k, 1.0, a.data(), k, b.data(), n, 0.0, c.data(), n);
      return c;
    };
    const xt::xarray<double> one = run(1);
    double worst = 0.0;
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (std::size_t p = 0; p < k; ++p) sum += a(i, p) * b(p, j);
        worst = std::max(worst, std::abs(sum - one(i, j)));
      }
    CHECK(worst < 1e-11);
    CAPTURE(attn::blas::has_small_matrix_kernels());
    for (int threads : {2, 3}) {
      if (attn::blas::has_small_matrix_kernels()) CHECK(run(threads) == one);
      else CHECK(xt::allclose(run(threads), one, 0.0, 1e-13 * xt::amax(xt::abs(one))()));
    }
  }
}

TEST_CASE("matmul and linear split over threads, forward and backward") {
  auto products = [] {
    // A stack of per-head products ([B, H, T, d] x [B, H, d, T]), a broadcast
    // stack (b shared by every batch: its gradient adds up in order), and linear.
    attn::Tensor q = test::randn({8, 4, 20, 32}, 1), k = test::randn({8, 4, 32, 20}, 2);
    attn::Tensor x = test::randn({16, 40, 64}, 3), w = test::randn({64, 96}, 4);
    attn::Tensor h = test::randn({64, 256}, 5), weight = test::randn({512, 256}, 6), bias = test::randn({512}, 7);
    attn::Tensor loss = attn::sum(attn::tanh(attn::matmul(q, k))) + attn::sum(attn::tanh(attn::matmul(x, w))) +
                        attn::sum(attn::tanh(attn::linear(h, weight, bias)));
    loss.backward();
    return std::vector<attn::Tensor>{loss, q.grad(), k.grad(), x.grad(), w.grad(), h.grad(), weight.grad(),
                                     bias.grad()};
  };
  same_at_any_threads(products);
}

TEST_CASE("vecmath over a long array: the same bits at 1, 2 and 3 threads, in place too") {
  // 100003 values: six pieces of 16384 and a tail that is not a multiple of any SIMD width.
  std::vector<double> x(100003);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = -20.0 + 40.0 * static_cast<double>(i) / x.size();
  auto run = [&](int threads) {
    ThreadsFor set(threads);
    std::vector<double> y(x.size()), z = x;
    attn::vecmath::tanh(x.data(), y.data(), x.size());
    attn::vecmath::exp(z.data(), z.data(), z.size());
    y.insert(y.end(), z.begin(), z.end());
    return y;
  };
  const std::vector<double> one = run(1);
  CHECK(run(2) == one);
  CHECK(run(3) == one);
}

