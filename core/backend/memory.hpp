// How attn's programs ask glibc's malloc to keep freed memory for reuse.
//
// By default glibc hands a freed block of 128 kB or more straight back to the
// OS, and trims the top of the heap when much of it is free. A training step
// allocates the same few hundred arrays every step, most of them that big, so
// every step then asks the OS for fresh pages, which it must fault in and zero
// one by one (docs/benchmarks.md measures the share of a training step). After
// reuse_freed_memory() those arrays come from memory the process already holds.
// The cost: the process keeps its peak memory (RSS) until it exits.
//
// The attn command line and the benchmarks call it once at start; call it in
// your own training program too. It is the same as running a program with
//   GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_max=0
// Returns false (and changes nothing) where malloc is not glibc's: another C
// library, or a sanitizer's allocator (AddressSanitizer ignores mallopt).
#pragma once

namespace attn {

bool reuse_freed_memory();

}  // namespace attn
