// Stopping a long computation from outside: the notebook kernel's stop button.
//
// The kernel's SIGINT handler calls request_interrupt(); attn checks the flag at
// safe points (the top of every backward()), where throw_if_interrupted() throws
// attn::Interrupted, so a training loop stops at its next step with its
// tensors intact. Like Python's KeyboardInterrupt, Interrupted is not a
// std::exception: a `catch (const std::exception&)` in a loop does not swallow it.
#pragma once

#include <string>

namespace attn {

struct Interrupted {
  const char* what() const noexcept { return "interrupted (the stop button, or SIGINT)"; }
};

// Async-signal-safe: sets a lock-free atomic flag.
void request_interrupt() noexcept;
// Drops a request nobody acted on (the kernel calls it when a cell ends).
void clear_interrupt() noexcept;
bool interrupt_requested() noexcept;
// Throws Interrupted (and clears the flag) if an interrupt was requested.
void throw_if_interrupted();

}  // namespace attn
