// .npz files: a zip archive (through libzip) of .npy files (npy.cpp).
#include "npz.hpp"

#include "npy.hpp"
#include "../core/errors.hpp"

#include <zip.h>
#include <unistd.h>  // getpid

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>

namespace attn::nn {

namespace {

// libzip's message for an error code, e.g. "Not a zip archive".
std::string zip_message(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string message = zip_error_strerror(&error);
  zip_error_fini(&error);
  return message;
}

// Closes an archive without writing anything, whatever happens.
struct Discard {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};
using Archive = std::unique_ptr<zip_t, Discard>;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "<path>.tmp.<pid>.<n>": next to the target, so that rename() replaces it in one step.
std::string temporary_path(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

// Writes the files into a new zip at `path`. Returns "" on success, else what went wrong.
std::string write_zip(const std::string& path, const std::vector<std::pair<std::string, std::string>>& files) {
  int code = 0;
  Archive archive(zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code));
  if (!archive) return zip_message(code);
  for (const auto& [name, bytes] : files) {
    // The source only points at `bytes`, which outlive the archive.
    zip_source_t* source = zip_source_buffer(archive.get(), bytes.data(), bytes.size(), 0);
    if (!source) return zip_strerror(archive.get());
    const zip_int64_t index = zip_file_add(archive.get(), name.c_str(), source, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(source);  // not taken over by the archive
      return zip_strerror(archive.get());
    }
    if (zip_set_file_compression(archive.get(), static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0) != 0)
      return zip_strerror(archive.get());
  }
  // zip_close writes the file; on failure the archive is still open and Discard frees it.
  if (zip_close(archive.get()) != 0) return zip_strerror(archive.get());
  archive.release();
  return "";
}

// The bytes of entry `index`, read in chunks (sizes in a damaged archive can't be trusted).
std::string read_entry(zip_t* archive, zip_uint64_t index, const std::string& where) {
  zip_file_t* file = zip_fopen_index(archive, index, 0);
  if (!file) throw IOError(where + ": cannot open it inside the archive: " + zip_strerror(archive));
  std::string bytes;
  char chunk[1 << 16];
  zip_int64_t n = 0;
  while ((n = zip_fread(file, chunk, sizeof(chunk))) > 0) bytes.append(chunk, static_cast<std::size_t>(n));
  const std::string error = n < 0 ? zip_file_strerror(file) : "";
  zip_fclose(file);
  if (n < 0) throw IOError(where + ": cannot read it (the archive is damaged): " + error);
  return bytes;
}

}  // namespace

void save_npz(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors) {
  // Everything is checked and encoded before any file is touched.
  if (tensors.empty())
    throw ValueError("save_npz: nothing to save to '" + path + "' (libzip writes no file for an empty archive)");
  std::vector<std::pair<std::string, std::string>> files;  // "<name>.npy", its bytes
  std::set<std::string> seen;
  for (const auto& [name, t] : tensors) {
    if (name.empty()) throw ValueError("save_npz: an empty name, saving '" + path + "'");
    if (!seen.insert(name).second) throw ValueError("save_npz: the name '" + name + "' appears twice, saving '" + path + "'");
    if (!t.defined()) throw ValueError("save_npz: the tensor '" + name + "' is undefined, saving '" + path + "'");
    files.emplace_back(name + ".npy", to_npy(t));
  }

  const std::string temporary = temporary_path(path);
  std::string error = write_zip(temporary, files);
  if (error.empty() && std::rename(temporary.c_str(), path.c_str()) != 0)
    error = "cannot rename '" + temporary + "' over it: " + std::strerror(errno);
  if (!error.empty()) {
    std::remove(temporary.c_str());  // may not exist: nothing to check
    throw IOError("save_npz: cannot write '" + path + "': " + error);
  }
}

std::vector<std::pair<std::string, Tensor>> load_npz(const std::string& path) {
  int code = 0;
  // ZIP_CHECKCONS: also check that the archive's directories agree with each other.
  Archive archive(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code));
  if (!archive)
    throw IOError("load_npz: cannot read '" + path + "': " + zip_message(code) +
                  (code == ZIP_ER_NOZIP ? " (truncated, or not an .npz file at all)" : ""));

  const zip_int64_t count = zip_get_num_entries(archive.get(), 0);
  std::vector<std::pair<std::string, Tensor>> tensors;
  std::set<std::string> seen;
  for (zip_int64_t i = 0; i < count; ++i) {
    const auto index = static_cast<zip_uint64_t>(i);
    const char* raw_name = zip_get_name(archive.get(), index, 0);
    if (!raw_name) throw IOError("load_npz: '" + path + "': entry " + std::to_string(i) + " has no name: " + zip_strerror(archive.get()));
    const std::string file_name = raw_name;
    const std::string where = path + ": " + file_name;
    if (!ends_with(file_name, ".npy") || file_name.size() == 4)
      throw IOError(where + ": not a .npy file (an .npz holds only <name>.npy arrays)");
    const std::string name = file_name.substr(0, file_name.size() - 4);
    if (!seen.insert(name).second) throw IOError(where + ": the archive holds this name twice");
    tensors.emplace_back(name, from_npy(read_entry(archive.get(), index, where), where));
  }
  return tensors;
}

}  // namespace attn::nn
