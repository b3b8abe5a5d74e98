// .npz files: a zip archive (through libzip) of .npy files (npy.cpp).
#include "npz.hpp"

#include "npy.hpp"
#include "../core/errors.hpp"

#include <zip.h>
#include <unistd.h>  // getpid

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <set>
#include <vector>

namespace attn::io {

namespace {

// The first name that appears twice in a zip's central directory (libzip refuses such an
// archive without naming it): the end record gives the directory's place, each entry its name.
std::string duplicate_member(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "?";
  std::string bytes;
  char buffer[1 << 16];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0 && bytes.size() < (std::size_t(64) << 20);)
    bytes.append(buffer, n);
  std::fclose(f);
  auto u16 = [&](std::size_t at) { return at + 2 <= bytes.size() ? unsigned(std::uint8_t(bytes[at])) | unsigned(std::uint8_t(bytes[at + 1])) << 8 : 0u; };
  auto u32 = [&](std::size_t at) { return at + 4 <= bytes.size() ? std::size_t(u16(at)) | std::size_t(u16(at + 2)) << 16 : std::size_t(0); };
  const std::size_t end = bytes.rfind(std::string("PK\x05\x06", 4));
  if (end == std::string::npos) return "?";
  std::set<std::string> seen;
  std::size_t at = u32(end + 16);
  for (unsigned i = 0, n = u16(end + 10); i < n && at + 46 <= bytes.size() && u32(at) == 0x02014b50; ++i) {
    const std::size_t name_length = u16(at + 28), extra = u16(at + 30), comment = u16(at + 32);
    const std::string name = bytes.substr(at + 46, name_length);
    if (!seen.insert(name).second) return name;
    at += 46 + name_length + extra + comment;
  }
  return "?";
}

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

// One member's decompressed stream, closed whatever happens.
class Member {
 public:
  Member(zip_t* archive, zip_uint64_t index, std::string where) : where_(std::move(where)) {
    file_ = zip_fopen_index(archive, index, 0);
    if (!file_) throw IOError(where_ + ": cannot open it inside the archive: " + zip_strerror(archive));
  }
  ~Member() { zip_fclose(file_); }
  Member(const Member&) = delete;
  Member& operator=(const Member&) = delete;

  // Reads n bytes, or fewer only where the stream ends. libzip checks the CRC
  // when a read reaches the end.
  std::size_t read(char* out, std::size_t n) {
    std::size_t got = 0;
    while (got < n) {
      const zip_int64_t r = zip_fread(file_, out + got, n - got);
      if (r < 0) throw IOError(where_ + ": damaged (" + zip_file_strerror(file_) + ")");
      if (r == 0) break;
      got += static_cast<std::size_t>(r);
    }
    return got;
  }

 private:
  std::string where_;
  zip_file_t* file_;
};

// A deflate stream expands at most about 1032 times (258-byte matches coded in 2 bits).
constexpr zip_uint64_t kMaxDeflateRatio = 1032;

// The values are read through a buffer of this size (a multiple of every item size).
constexpr std::size_t kChunk = 1 << 16;

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

struct NpzReader::Archive {
  explicit Archive(zip_t* zip) : zip(zip) {}
  ~Archive() { zip_discard(zip); }  // opened read-only: nothing to write
  zip_t* zip;
};

NpzReader::NpzReader(const std::string& path) : path_(path) {
  int code = 0;
  // ZIP_CHECKCONS: also check that the archive's directories agree with each other.
  zip_t* zip = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
  if (!zip && code == ZIP_ER_EXISTS)  // libzip's words are "File already exists": say which name is there twice
    throw IOError("load_npz: cannot read '" + path + "': the archive holds two members named '" +
                  duplicate_member(path) + "' (damaged, or not written by numpy or attn)");
  if (!zip)
    throw IOError("load_npz: cannot read '" + path + "': " + zip_message(code) +
                  (code == ZIP_ER_NOZIP ? " (truncated, or not an .npz file at all)" : ""));
  archive_ = std::make_unique<Archive>(zip);

  const zip_int64_t count = zip_get_num_entries(zip, 0);
  std::set<std::string> seen;
  for (zip_int64_t i = 0; i < count; ++i) {
    const auto index = static_cast<zip_uint64_t>(i);
    // 1. The name: "<name>.npy", once.
    const char* raw_name = zip_get_name(zip, index, 0);
    if (!raw_name) throw IOError("load_npz: '" + path + "': entry " + std::to_string(i) + " has no name: " + zip_strerror(zip));
    const std::string file_name = raw_name;
    const std::string where = path + ": " + file_name;
    if (!ends_with(file_name, ".npy") || file_name.size() == 4)
      throw IOError(where + ": not a .npy file (an .npz holds only <name>.npy arrays)");
    const std::string name = file_name.substr(0, file_name.size() - 4);
    if (!seen.insert(name).second) throw IOError(where + ": the archive holds this name twice");

    // 2. The zip directory's sizes: can the compressed stream hold the declared size?
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(zip, index, 0, &st) != 0) throw IOError(where + ": damaged (" + zip_strerror(zip) + ")");
    const zip_uint64_t needs = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
    if ((st.valid & needs) != needs) throw IOError(where + ": damaged (the zip directory gives no sizes)");
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
      throw IOError(where + ": encrypted (attn reads unencrypted .npz files only)");
    if (st.comp_method == ZIP_CM_STORE && st.comp_size != st.size)
      throw IOError(where + ": damaged: stored uncompressed in " + std::to_string(st.comp_size) +
                    " bytes, but the zip directory declares " + std::to_string(st.size));
    if (st.comp_method == ZIP_CM_DEFLATE && st.size / kMaxDeflateRatio > st.comp_size + 1)
      throw IOError(where + ": damaged: a deflated stream of " + std::to_string(st.comp_size) +
                    " bytes cannot expand to the " + std::to_string(st.size) + " bytes the zip directory declares");
    if (st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE)
      throw IOError(where + ": compression method " + std::to_string(st.comp_method) +
                    " is not supported (numpy writes members stored or deflated)");

    // 3. The .npy header, alone: at most kMaxNpyHeader bytes are decompressed.
    Member member(zip, index, where);
    std::string head(12, '\0');
    head.resize(member.read(&head[0], std::min<zip_uint64_t>(12, st.size)));
    const std::size_t offset = npy_data_offset(head, where);
    if (offset > st.size)
      throw IOError(where + ": damaged: the zip directory declares " + std::to_string(st.size) +
                    " bytes, fewer than its .npy header's " + std::to_string(offset));
    const std::size_t got = head.size();
    head.resize(offset);
    head.resize(got + member.read(&head[got], offset - got));
    const NpyHeader header = parse_npy_header(head, where);

    // 4. The header's shape must account for every byte the zip directory declares.
    if (st.size - offset != header.data_bytes)
      throw IOError(where + ": damaged: its .npy header declares a " + header.descr + " array of shape " +
                    shape_str(header.shape) + " (" + std::to_string(header.data_bytes) +
                    " bytes of data), the zip directory " + std::to_string(st.size - offset) + " bytes");
    names_.push_back(name);
    headers_.push_back(header);
  }
}

NpzReader::~NpzReader() = default;

std::string NpzReader::where(std::size_t i) const { return path_ + ": " + name(i) + ".npy"; }

void NpzReader::stream(std::size_t i, const std::function<void(const char*, std::size_t)>& chunk) {
  const NpyHeader& h = header(i);
  Member member(archive_->zip, i, where(i));
  std::vector<char> buffer(std::max(kChunk, h.data_offset));
  if (member.read(buffer.data(), h.data_offset) != h.data_offset)  // the header, read again
    throw IOError(where(i) + ": damaged: the stream ends inside its .npy header");
  std::size_t done = 0;
  while (done < h.data_bytes) {
    const std::size_t want = std::min(kChunk, h.data_bytes - done);
    const std::size_t got = member.read(buffer.data(), want);
    if (got != want)
      throw IOError(where(i) + ": damaged: the stream ends after " + std::to_string(done + got) + " of the " +
                    std::to_string(h.data_bytes) + " bytes of data its .npy header declares");
    chunk(buffer.data(), got);
    done += got;
  }
  char extra = 0;  // one more byte: must be the end (and lets libzip check the CRC)
  if (member.read(&extra, 1) != 0)
    throw IOError(where(i) + ": damaged: the stream holds more than the " + std::to_string(h.data_bytes) +
                  " bytes of data its .npy header declares");
}

void NpzReader::read_into(std::size_t i, Tensor& dest) {
  const NpyHeader& h = header(i);
  if (dest.shape() != h.shape)
    throw ValueError("NpzReader::read_into: " + where(i) + " has shape " + shape_str(h.shape) + ", the tensor " +
                     shape_str(dest.shape()));
  std::size_t first = 0;
  stream(i, [&](const char* bytes, std::size_t n) {
    decode_npy_values(h, bytes, n / h.item_size, dest, first);
    first += n / h.item_size;
  });
}

Tensor NpzReader::read(std::size_t i, std::optional<Dtype> dtype) {
  const NpyHeader& h = header(i);
  Tensor t;
  try {
    t = dtype.value_or(h.dtype()) == Dtype::Float64 ? Tensor(xt::xarray<double>::from_shape(h.shape))
                                                    : Tensor(xt::xarray<float>::from_shape(h.shape));
  } catch (const std::bad_alloc&) {
    throw IOError(where(i) + ": cannot allocate memory for its " + h.descr + " array of shape " + shape_str(h.shape) +
                  " (" + std::to_string(h.data_bytes) + " bytes of data)");
  }
  read_into(i, t);
  return t;
}

void NpzReader::verify() {
  for (std::size_t i = 0; i < size(); ++i) stream(i, [](const char*, std::size_t) {});
}

std::vector<std::pair<std::string, Tensor>> load_npz(const std::string& path) {
  NpzReader file(path);
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (std::size_t i = 0; i < file.size(); ++i) tensors.emplace_back(file.name(i), file.read(i));
  return tensors;
}

std::vector<std::pair<std::string, Tensor>> load_npz(
    const std::string& path, const std::function<std::optional<ArraySpec>(const std::string& name)>& spec) {
  NpzReader file(path);
  // Every header against what the caller needs, before any value is read.
  std::vector<std::pair<std::size_t, Dtype>> wanted;
  for (std::size_t i = 0; i < file.size(); ++i) {
    std::optional<ArraySpec> want;
    try {
      want = spec(file.name(i));
    } catch (const IOError&) {
      throw;
    } catch (const std::exception& e) {
      throw IOError(file.where(i) + ": " + e.what());
    }
    if (!want) continue;
    if (want->shape != file.header(i).shape)
      throw IOError(file.where(i) + ": expected shape " + shape_str(want->shape) + ", found " +
                    shape_str(file.header(i).shape));
    wanted.emplace_back(i, want->dtype);
  }
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const auto& [i, dtype] : wanted) tensors.emplace_back(file.name(i), file.read(i, dtype));
  return tensors;
}

}  // namespace attn::io
