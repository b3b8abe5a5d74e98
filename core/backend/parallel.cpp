// The thread pool behind parallel_for (see parallel.hpp).
//
// One job at a time. run() publishes a job (a function and how many shares it
// has), wakes the workers, and then claims shares itself like any worker.
// Shares are claimed one at a time under the mutex, so a worker the OS has not
// scheduled yet simply finds every share taken: the caller never waits for a
// thread that has not started, only for shares already running.
//
// Between jobs a worker spins for a while before it sleeps: during a training
// step the products come tens of microseconds apart, and a sleeping thread
// takes about as long to wake up. It yields the CPU while it spins, so it does
// not starve other programs.
#include "parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace attn {

namespace {

constexpr auto kSpinBeforeSleep = std::chrono::microseconds(500);

// True on a pool's workers, and on a thread while it runs a parallel_for.
thread_local bool inside_parallel_for = false;

class Pool {
 public:
  explicit Pool(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }

  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
  }

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs share(0), ..., share(shares - 1) on the workers and the calling thread.
  void run(std::size_t shares, const std::function<void(std::size_t)>& share) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      share_ = &share;
      shares_ = shares;
      next_ = 0;
      error_ = nullptr;
      done_.store(0, std::memory_order_relaxed);
      job_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    take_shares();
    while (done_.load(std::memory_order_acquire) != shares) std::this_thread::yield();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // Claims and runs shares of the current job until none is left.
  void take_shares() {
    for (;;) {
      const std::function<void(std::size_t)>* share = nullptr;
      std::size_t index = 0;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (next_ == shares_) return;
        index = next_++;
        share = share_;
      }
      try {
        (*share)(index);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
      }
      done_.fetch_add(1, std::memory_order_release);
    }
  }

  void work() {
    inside_parallel_for = true;
    std::uint64_t seen = 0;
    for (;;) {
      const auto sleep_at = std::chrono::steady_clock::now() + kSpinBeforeSleep;
      while (job_.load(std::memory_order_acquire) == seen && std::chrono::steady_clock::now() < sleep_at)
        std::this_thread::yield();
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || job_.load(std::memory_order_relaxed) != seen; });
        if (stop_) return;
        seen = job_.load(std::memory_order_relaxed);
      }
      take_shares();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;  // guards everything below but the atomics
  std::condition_variable wake_;
  bool stop_ = false;
  const std::function<void(std::size_t)>* share_ = nullptr;
  std::size_t shares_ = 0;
  std::size_t next_ = 0;  // the next share to claim
  std::exception_ptr error_;
  std::atomic<std::uint64_t> job_{0};  // counts jobs: a worker sees a new one when it changes
  std::atomic<std::size_t> done_{0};   // shares of the current job finished
};

int threads_by_default() {
  if (const char* text = std::getenv("ATTN_NUM_THREADS")) {
    char* end = nullptr;
    const long threads = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || threads < 1 || threads > 1024)
      throw std::invalid_argument(std::string("ATTN_NUM_THREADS: expected a whole number from 1 to 1024, got '") +
                                  text + "'");
    return static_cast<int>(threads);
  }
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(cores);
}

std::mutex pool_mutex;               // held while a parallel_for runs, and to change the pool
std::atomic<int> wanted_threads{0};  // 0: not decided yet
std::unique_ptr<Pool> pool;          // created by the first parallel_for that needs workers

// Read without the mutex, so that a parallel_for's body may ask too.
int num_threads() {
  int threads = wanted_threads.load();
  if (threads == 0) {
    int undecided = 0;
    wanted_threads.compare_exchange_strong(undecided, threads_by_default());
    threads = wanted_threads.load();
  }
  return threads;
}

}  // namespace

void set_num_threads(int threads) {
  if (threads < 1) throw std::invalid_argument("set_num_threads: expected at least 1 thread, got " + std::to_string(threads));
  if (inside_parallel_for) throw std::logic_error("set_num_threads: called inside a parallel_for");
  std::lock_guard<std::mutex> lock(pool_mutex);
  wanted_threads = threads;
  if (pool && pool->threads() != threads) pool.reset();
}

int get_num_threads() { return num_threads(); }

std::size_t even_grain(std::size_t n, std::size_t work, std::size_t min_work) {
  const double worth = static_cast<double>(n) * static_cast<double>(work) / static_cast<double>(std::max<std::size_t>(min_work, 1));
  const std::size_t shares = static_cast<std::size_t>(std::clamp(worth, 1.0, static_cast<double>(num_threads())));
  return std::max<std::size_t>(1, (n + shares - 1) / shares);
}

void detail::parallel_for(std::size_t n, std::size_t grain,
                          const std::function<void(std::size_t, std::size_t)>& body) {
  if (grain == 0) grain = 1;
  const std::size_t units = (n + grain - 1) / grain;
  std::unique_lock<std::mutex> lock(pool_mutex, std::defer_lock);
  const int threads = units < 2 || inside_parallel_for || !lock.try_lock() ? 1 : num_threads();
  if (threads == 1) {
    if (n > 0) body(0, n);
    return;
  }
  const std::size_t shares = std::min<std::size_t>(units, static_cast<std::size_t>(threads));
  if (!pool) pool = std::make_unique<Pool>(threads);
  // Share s covers the units [s * units / shares, (s + 1) * units / shares).
  auto share = [&](std::size_t s) {
    const std::size_t begin = s * units / shares * grain;
    const std::size_t end = std::min(n, (s + 1) * units / shares * grain);
    body(begin, end);
  };
  struct Inside {  // marks this thread as inside a parallel_for until the job is done, or throws
    Inside() { inside_parallel_for = true; }
    ~Inside() { inside_parallel_for = false; }
  } inside;
  pool->run(shares, share);
}

}  // namespace attn
