#include "interrupt.hpp"

#include <atomic>

namespace attn {

namespace {
std::atomic<bool> requested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "a signal handler may only touch a lock-free atomic");
}  // namespace

void request_interrupt() noexcept { requested.store(true, std::memory_order_relaxed); }

void clear_interrupt() noexcept { requested.store(false, std::memory_order_relaxed); }

bool interrupt_requested() noexcept { return requested.load(std::memory_order_relaxed); }

// A plain load first: every backward() calls it, and an atomic exchange costs more.
void throw_if_interrupted() {
  if (requested.load(std::memory_order_relaxed) && requested.exchange(false, std::memory_order_relaxed))
    throw Interrupted{};
}

}  // namespace attn
