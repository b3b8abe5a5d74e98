// Where the time goes, op by op: a small profiler in the spirit of
// torch.autograd.profiler.
//
//   attn::profiler::enable();
//   for (int i = 0; i < 10; ++i) train_step();
//   std::cout << attn::profiler::table();   // op, calls, forward ms, backward ms
//
// Backward time is exact: the engine times each node's backward function.
// Forward time is charged to an op when it records its result, as the time
// since the previous op recorded one: the op's own work plus any plain C++
// that ran between the two ops. Code that records no op (an optimizer step,
// data loading) is charged to the next op, so call profiler::mark() after it.
// Off by default; when off it costs one branch per op.
#pragma once

#include "../kernels.hpp"

#include <string>

namespace attn::profiler {

void enable(bool on = true);
bool enabled();
void reset();        // forget everything counted so far
void mark();         // start the next op's forward clock now
// One row per op, the slowest first, and the totals; times divided by `per`
// (the number of steps profiled, for times per step).
std::string table(int per = 1);

// The engine's hooks, forward_recorded and backward_ran, are declared in core/kernels.hpp.

}  // namespace attn::profiler
