// attn's per-op overhead counted in instructions instead of time.
//
// Timing the few hundred nanoseconds attn adds to an op is at the mercy of the
// machine: on a noisy VM, and with the heap layout moving how fast the same
// copies run, ops_bench's pair rows move by a microsecond from run to run.
// An instruction count does not move. This program runs one case of
// op_cases.hpp `calls` times; bench/op_instructions.sh runs it under
// callgrind at two call counts, for attn() and raw(), and prints
//   (attn instructions per call) - (raw instructions per call)
// which is what attn executes above the arithmetic: checks, the node, the
// graph walk, gradient buffers, freeing. (Setup cancels out in the difference
// of two call counts.)
//
//   op_instructions <add|tanh|softmax|matmul128> <f32|f64> <attn|raw> <calls>
#include "op_cases.hpp"

#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>

namespace {

template <class Case>
void run(bool through_attn, long calls) {
  Case c;
  for (long i = 0; i < calls; ++i) through_attn ? c.attn() : c.raw();
}

template <class T>
void run_op(const std::string& op, bool through_attn, long calls) {
  if (op == "add") run<bench::AddCase<T>>(through_attn, calls);
  else if (op == "tanh") run<bench::TanhCase<T>>(through_attn, calls);
  else if (op == "softmax") run<bench::SoftmaxCase<T>>(through_attn, calls);
  else if (op == "matmul128") run<bench::MatmulCase<T>>(through_attn, calls);
  else throw std::invalid_argument("op_instructions: expected op add, tanh, softmax or matmul128, got '" + op + "'");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc != 5) throw std::invalid_argument("usage: op_instructions <add|tanh|softmax|matmul128> <f32|f64> <attn|raw> <calls>");
    const std::string op = argv[1], dtype = argv[2], side = argv[3];
    if (side != "attn" && side != "raw") throw std::invalid_argument("op_instructions: expected attn or raw, got '" + side + "'");
    const long calls = std::stol(argv[4]);
    attn::reuse_freed_memory();  // as ops_bench and the attn command line do
    if (dtype == "f32") run_op<float>(op, side == "attn", calls);
    else if (dtype == "f64") run_op<double>(op, side == "attn", calls);
    else throw std::invalid_argument("op_instructions: expected dtype f32 or f64, got '" + dtype + "'");
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  return 0;
}
