#include "memory.hpp"

#include <cstdlib>  // defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace attn {

bool reuse_freed_memory() {
#if defined(__GLIBC__)
  // Blocks up to 32 MB (glibc's largest allowed threshold) come from the heap, not from mmap,
  // and the heap keeps up to 1 GB of free memory at its top instead of returning it. Larger
  // blocks (a [640, 8000] f64 array is 41 MB) would still be mmap'ed and their pages faulted
  // in afresh at every step: no mmap at all (M_MMAP_MAX 0) puts them on the heap too.
  return mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024) == 1 && mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024) == 1 &&
         mallopt(M_MMAP_MAX, 0) == 1;
#else
  return false;
#endif
}

}  // namespace attn
