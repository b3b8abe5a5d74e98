#include "output.hpp"

#include "../core/errors.hpp"
#include "../io/atomic_file.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attn::cli {

namespace fs = std::filesystem;

namespace {

// The same file: one device and inode, whatever the names.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool found = false;
  bool operator==(const FileId& o) const { return found && o.found && dev == o.dev && ino == o.ino; }
};

FileId file_id(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return {};
  return {st.st_dev, st.st_ino, true};
}

bool is_checkpoint_folder(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / "manifest.json", ec) && (fs::exists(dir.parent_path() / "lock", ec) ||
                                                   dir.filename().string().rfind("checkpoint", 0) == 0);
}

bool holds_a_run(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir / "checkpoint", ec) && fs::exists(dir / "checkpoint" / "manifest.json", ec);
}

// The run folder of `dir` (a run folder, or its checkpoint folder), or "" if it is neither.
std::string run_folder(const std::string& dir) {
  std::error_code ec;
  if (holds_a_run(dir)) return dir;
  const fs::path parent = fs::path(dir).lexically_normal().parent_path();
  if (fs::exists(fs::path(dir) / "manifest.json", ec) && holds_a_run(parent)) return parent.string();
  return "";
}

// The files a run reads that live outside its folder (its corpus, its test file): config.json's
// task names them by absolute path. A config that cannot be read names none (loading it reports why).
std::vector<std::string> run_corpora(const std::string& run) {
  const fs::path config = fs::path(run) / "checkpoint" / "config.json";
  std::error_code ec;
  const auto size = fs::file_size(config, ec);
  if (ec || size > (8u << 20)) return {};
  std::ifstream in(config);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json parsed = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object() || !parsed.contains("task") || !parsed.at("task").is_object()) return {};
  std::vector<std::string> files;
  for (const char* key : {"file", "test_file"}) {
    const nlohmann::json& task = parsed.at("task");
    if (task.contains(key) && task.at(key).is_string() && !task.at(key).get<std::string>().empty())
      files.push_back(task.at(key).get<std::string>());
  }
  return files;
}

// A folder of the kernel's (/proc, /sys): its files look regular, but nothing can be written there.
bool system_folder(const fs::path& folder) {
  std::error_code ec;
  const fs::path real = fs::canonical(folder, ec);
  if (ec) return false;
  const std::string s = real.string();
  for (const char* root : {"/proc", "/sys", "/dev"})
    if (s == root || s.rfind(std::string(root) + "/", 0) == 0) return true;
  return false;
}

[[noreturn]] void refuse(const Output& out, const std::string& why) {
  throw ValueError(out.flag + " " + out.path + ": " + why);
}

// The run folders in `root` and below it, `depth` levels down at most: the runs a command that reads no run
// (corpus gettext, bpe learn) may still break by replacing their corpus. At most kMaxEntries folder entries
// are looked at, so that a large tree (a home folder) costs a fraction of a second.
void find_runs(const fs::path& root, int depth, std::vector<std::string>& runs, std::size_t& entries) {
  constexpr std::size_t kMaxEntries = 20000;
  std::error_code ec;
  if (holds_a_run(root)) {
    runs.push_back(root.string());
    return;  // a run folder holds no other run
  }
  if (depth == 0) return;
  for (fs::directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (++entries > kMaxEntries) return;
    if (it->is_directory(ec) && !it->is_symlink(ec) && it->path().filename().string().rfind('.', 0) != 0)
      find_runs(it->path(), depth - 1, runs, entries);
  }
}

// The lines of the user's run list: (corpus, run) pairs, as written; none if there is no list.
std::vector<std::pair<std::string, std::string>> read_run_list();

}  // namespace

void check_output(const Output& out, const std::vector<Input>& inputs, const std::vector<std::string>& runs) {
  if (out.path.empty()) throw ValueError(out.flag + ": expected a file name, got an empty value");
  struct stat st;
  const bool exists = ::lstat(out.path.c_str(), &st) == 0;
  if (exists && S_ISLNK(st.st_mode))
    refuse(out, "is a symbolic link; attn writes no file through a link (remove the link, or name the file itself)");
  if (exists && S_ISDIR(st.st_mode)) refuse(out, "is a directory; expected a file name");
  if (exists && !S_ISREG(st.st_mode)) refuse(out, "is not a regular file (a device, a pipe or a socket)");
  const fs::path parent = fs::path(out.path).parent_path().empty() ? fs::path(".") : fs::path(out.path).parent_path();
  std::error_code ec;
  if (!fs::is_directory(parent, ec))
    refuse(out, "cannot write: its folder " + parent.string() + " does not exist");
  if (system_folder(parent))
    refuse(out, "is in " + fs::canonical(parent, ec).string() +
                    ", a folder of the kernel's where no file can be written; choose a file in a folder of yours");
  const FileId id = file_id(out.path);
  for (const Input& input : inputs)
    if (id == file_id(input.path))
      refuse(out, "is " + input.path + ", " + input.what + "; choose another file (even --overwrite replaces no input)");
  // Every file of the runs the command reads, under any name (a hard link is the same inode).
  for (const std::string& dir : runs) {
    const std::string run = run_folder(dir);
    if (run.empty() || !id.found) continue;
    for (const std::string& corpus : run_corpora(run))
      if (id == file_id(corpus))
        refuse(out, "is " + corpus + ", the run's corpus (" + run + " reads it again in eval and --resume); "
                        "choose another file (even --overwrite replaces no file a run depends on)");
    std::size_t seen = 0;
    for (auto it = fs::recursive_directory_iterator(run, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator() && ++seen < 100000; it.increment(ec))
      if (it->is_regular_file(ec) && id == file_id(it->path().string()))
        refuse(out, "is " + it->path().string() + ", a file of the run " + run +
                        "; writing it would destroy the run; choose a file outside the run folder");
  }
  // An existing file may be the corpus of a run the command does not read: the runs next to the file and
  // under the current folder are looked for (replaced, the corpus would make each of them fail eval and
  // --resume, its checksum changed).
  if (exists && id.found) {
    std::vector<std::string> nearby;
    std::size_t entries = 0;
    for (const fs::path& root : {parent, fs::path(".")}) find_runs(root, 3, nearby, entries);
    for (const std::string& run : nearby)
      for (const std::string& corpus : run_corpora(run))
        if (id == file_id(corpus))
          refuse(out, "is " + corpus + ", the corpus of the run " + run + " (which reads it again in eval and "
                          "--resume, and refuses it changed); choose another file (even --overwrite replaces no file "
                          "a run depends on)");
  }
  // Wherever the command started, the corpus of one of the user's runs (the run list) is kept while the run names it.
  if (exists && id.found)
    for (const auto& [corpus, run] : read_run_list()) {
      if (!(id == file_id(corpus)) || !holds_a_run(run)) continue;
      for (const std::string& named : run_corpora(run))
        if (id == file_id(named))
          refuse(out, "is " + named + ", the corpus of the run " + run + " (which reads it again in eval and "
                          "--resume, and refuses it changed); choose another file (even --overwrite replaces no file "
                          "a run depends on; the runs are listed in " + run_list_path() + ")");
    }
  // Any other run: its checkpoint folder is replaced whole, its own files are its own.
  const fs::path folder = fs::canonical(parent, ec);
  if (!ec && is_checkpoint_folder(folder))
    refuse(out, "is inside the checkpoint folder " + parent.string() +
                    " of a run, which attn replaces whole at every checkpoint; choose a file outside it");
  if (!ec && exists && holds_a_run(folder))
    refuse(out, "is a file of the run " + parent.string() + "; choose a file outside the run folder");
  if (exists && !out.overwrite)
    refuse(out, "exists, and attn does not replace a file it was not told to: add --overwrite to replace it, or "
                "choose a new file");
}

bool has_extension(const std::string& path, const std::string& extension) {
  if (path.size() < extension.size()) return false;
  for (std::size_t i = 0; i < extension.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(path[path.size() - extension.size() + i])) != extension[i]) return false;
  return true;
}

void check_extension(const Output& out, const std::vector<std::string>& extensions, const std::string& format) {
  std::string names;
  for (const std::string& e : extensions) {
    if (has_extension(out.path, e)) return;
    names += (names.empty() ? "" : ", ") + e;
  }
  refuse(out, "this command writes " + format + ", so the file must end with " + names +
                  " (attn writes no other format, and would not put this one in a file named otherwise)");
}

namespace {

// The text into a new temporary file next to `path`, then renamed over it (or, with
// `replace` false, only if `path` is still free). `shown` prefixes every message.
void write_atomically(const std::string& path, const std::string& text, bool replace, const std::string& shown) {
  try {
    io::write_file_atomically(path, text, {replace, shown});
  } catch (const io::FileAppeared& e) {
    throw IOError(std::string(e.what()) + " (add --overwrite to replace it)");
  }
}

}  // namespace

void write_output(const Output& out, const std::string& text, const std::vector<Input>& inputs,
                  const std::vector<std::string>& runs) {
  check_output(out, inputs, runs);  // again: the command may have run for a while
  write_atomically(out.path, text, out.overwrite, out.flag + " " + out.path);
}

std::string visible_text(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  auto escape = [&out](unsigned code) {
    char shown[8];
    std::snprintf(shown, sizeof shown, code < 0x100 ? "\\x%02x" : "\\u%04x", code);
    out += shown;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) escape(c);
    else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
             static_cast<unsigned char>(text[i + 1]) <= 0x9f)  // U+0080..U+009F, the C1 controls
      escape(static_cast<unsigned char>(text[++i]));
    else out += text[i];
  }
  return out;
}

void write_own_file(const std::string& path, const std::string& text) { write_atomically(path, text, true, path); }

std::string run_list_path() {
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state != nullptr && state[0] == '/') return std::string(state) + "/attn/corpora.tsv";
  const char* home = std::getenv("HOME");
  if (home == nullptr || home[0] != '/') return "";
  return std::string(home) + "/.local/state/attn/corpora.tsv";
}

namespace {

constexpr std::uintmax_t kMaxRunList = 1u << 20;  // bytes: rewritten without the gone runs beyond it

std::vector<std::pair<std::string, std::string>> read_run_list() {
  std::vector<std::pair<std::string, std::string>> lines;
  const std::string path = run_list_path();
  std::error_code ec;
  if (path.empty() || !fs::is_regular_file(path, ec) || fs::file_size(path, ec) > 4 * kMaxRunList) return lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto tab = line.find('\t');
    if (tab == std::string::npos || tab == 0 || tab + 1 == line.size() || line[0] != '/') continue;  // not a line of ours
    lines.emplace_back(line.substr(0, tab), line.substr(tab + 1));
  }
  return lines;
}

}  // namespace

void remember_run_corpora(const std::string& run, const nlohmann::json& config) {
  if (!config.is_object() || !config.contains("task") || !config.at("task").is_object()) return;
  std::vector<std::pair<std::string, std::string>> wanted;
  std::error_code ec;
  const std::string run_path = fs::absolute(run, ec).lexically_normal().string();
  for (const char* key : {"file", "test_file"}) {
    const nlohmann::json& task = config.at("task");
    if (!task.contains(key) || !task.at(key).is_string() || task.at(key).get<std::string>().empty()) continue;
    const std::string corpus = fs::absolute(task.at(key).get<std::string>(), ec).lexically_normal().string();
    if (corpus.find_first_of("\t\n") != std::string::npos || run_path.find_first_of("\t\n") != std::string::npos)
      continue;  // a name the list cannot hold; the nearby-run check still guards it
    wanted.emplace_back(corpus, run_path);
  }
  const std::string path = run_list_path();
  if (wanted.empty() || path.empty()) return;
  // A run commits a checkpoint many times: its lines are read and written once per process, not at every commit.
  static std::vector<std::pair<std::string, std::string>> listed;
  if (std::all_of(wanted.begin(), wanted.end(),
                  [](const auto& line) { return std::find(listed.begin(), listed.end(), line) != listed.end(); }))
    return;
  listed.insert(listed.end(), wanted.begin(), wanted.end());
  // Said once per process: the run is made all the same, guarded only where a command finds it (next to its corpus,
  // or under the folder a command starts in).
  auto warn = [&path](const std::string& why) {
    static bool warned = false;
    if (warned) return;
    warned = true;
    std::cerr << "warning: " << path << ": the run list cannot be written (" << why << "); this run's corpus is "
              << "guarded only from commands started above the run or next to the corpus" << std::endl;
  };
  try {
    std::vector<std::pair<std::string, std::string>> lines = read_run_list();
    std::vector<std::pair<std::string, std::string>> missing;
    for (const auto& line : wanted)
      if (std::find(lines.begin(), lines.end(), line) == lines.end()) missing.push_back(line);
    if (missing.empty()) return;
    fs::create_directories(fs::path(path).parent_path(), ec);
    if (ec) return warn(ec.message());
    if (fs::exists(path, ec) && fs::file_size(path, ec) + 4096 > kMaxRunList) {
      // Too long: keep only the runs that still exist, and write the list whole (atomically).
      std::string kept;
      for (const auto& [corpus, dir] : lines)
        if (holds_a_run(dir)) kept += corpus + "\t" + dir + "\n";
      for (const auto& [corpus, dir] : missing) kept += corpus + "\t" + dir + "\n";
      write_atomically(path, kept, true, path);
      return;
    }
    // One short append (O_APPEND writes of one buffer do not interleave with another process's).
    std::string text;
    for (const auto& [corpus, dir] : missing) text += corpus + "\t" + dir + "\n";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return warn(io::write_error_cause(errno));
    const ssize_t n = ::write(fd, text.data(), text.size());
    const int error = errno;
    ::close(fd);
    if (n != static_cast<ssize_t>(text.size())) warn(io::write_error_cause(n < 0 ? error : ENOSPC));  // a guard lost, never a run
  } catch (const std::exception& e) {
    warn(e.what());  // the list is a guard: a run is made even where it cannot be written
  }
}



}  // namespace attn::cli
