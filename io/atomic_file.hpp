// A file written whole or not at all: the bytes go into a new temporary file next to `path`
// (created exclusively, never through a link), forced to disk, then renamed over `path`. A kill,
// a full disk or a file-size limit leaves the previous file as it was and no temporary behind;
// rename replaces a link in the way rather than following it. A file replaced keeps its permission
// bits; the folder is synced after the rename, so the new name survives a power cut too.
//
//   io::write_file_atomically("runs/a/loss.svg", svg, {true, "runs/a/loss.svg"});
//
// Every IOError begins with `shown` (the name the user knows: "--out x.svg", a path):
//   "<shown>: cannot write: <cause>"                    the temporary could not be created, or the rename failed
//   "<shown>: writing failed: <cause>; nothing was written (the temporary file is removed)"
// With replace = false the file is written only if `path` is still free when the bytes are on disk
// (RENAME_NOREPLACE): a file that appeared meanwhile is kept, and FileAppeared says so.
#pragma once

#include "../core/errors.hpp"

#include <string>

namespace attn::io {

struct AtomicWrite {
  bool replace = true;
  std::string shown;  // "" : the path itself
};

// `path` appeared while the bytes were written (replace = false): it is kept.
class FileAppeared : public IOError {
 public:
  using IOError::IOError;
};

void write_file_atomically(const std::string& path, const std::string& bytes, const AtomicWrite& how = {});

// Why a write failed, in words a user acts on: "no space left on the device (ENOSPC)", "permission denied", ...
std::string write_error_cause(int error);

}  // namespace attn::io
