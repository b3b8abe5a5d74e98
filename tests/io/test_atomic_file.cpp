// A file written whole or not at all (io/atomic_file.hpp): the old bytes kept when a write fails midway
// (a child limited to 4096-byte files), no temporary left behind, a link in the way replaced and not
// followed, replace = false keeping a file that is there, and messages that begin with the name shown.
#include "../helpers.hpp"

#include "io/atomic_file.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace fs = std::filesystem;
namespace io = attn::io;

namespace {

struct TempDir {
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() / ("attn_test_atomic_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::size_t entries() const { return std::size_t(std::distance(fs::directory_iterator(path), fs::directory_iterator())); }
  fs::path path;
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("write_file_atomically writes a new file and replaces an old one whole") {
  TempDir dir;
  const std::string path = dir.file("a.txt");
  io::write_file_atomically(path, "first");
  CHECK(read_bytes(path) == "first");
  io::write_file_atomically(path, std::string(100000, 'x'));
  CHECK(read_bytes(path) == std::string(100000, 'x'));
  io::write_file_atomically(path, "");
  CHECK(read_bytes(path).empty());
  CHECK(dir.entries() == 1);
}

TEST_CASE("write_file_atomically: a write that fails midway keeps the old bytes and leaves no temporary") {
  TempDir dir;
  const std::string path = dir.file("kept.txt");
  io::write_file_atomically(path, "old bytes");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG instead of killing the process
    rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      io::write_file_atomically(path, std::string(10000, 'n'), {true, "--out kept.txt"});
    } catch (const attn::IOError& e) {
      const std::string what = e.what();
      ::_exit(what.rfind("--out kept.txt: writing failed: ", 0) == 0 &&
                      what.find("nothing was written (the temporary file is removed)") != std::string::npos
                  ? 0
                  : 2);
    }
    ::_exit(1);  // the write succeeded: the limit did not apply
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(read_bytes(path) == "old bytes");
  CHECK(dir.entries() == 1);
}

TEST_CASE("write_file_atomically replaces a link in the way, never the file it points to") {
  TempDir dir;
  const std::string target = dir.file("target.txt"), link = dir.file("link.txt");
  io::write_file_atomically(target, "the target");
  fs::create_symlink(target, link);
  io::write_file_atomically(link, "through the name");
  CHECK(read_bytes(target) == "the target");
  CHECK_FALSE(fs::is_symlink(link));
  CHECK(read_bytes(link) == "through the name");
}

TEST_CASE("write_file_atomically with replace = false keeps a file that is there, as FileAppeared") {
  TempDir dir;
  const std::string path = dir.file("there.txt");
  io::write_file_atomically(path, "mine");
  CHECK_THROWS_WITH_SUBSTR(io::write_file_atomically(path, "yours", {false, "--out there.txt"}), io::FileAppeared,
                           "--out there.txt: appeared while attn worked; it is kept");
  CHECK(read_bytes(path) == "mine");
  CHECK(dir.entries() == 1);
  io::write_file_atomically(dir.file("free.txt"), "new", {false, ""});
  CHECK(read_bytes(dir.file("free.txt")) == "new");
}

TEST_CASE("write_file_atomically names the file and the cause when it cannot write") {
  TempDir dir;
  const std::string missing = dir.file("no/such/folder.txt");
  CHECK_THROWS_WITH_SUBSTR(io::write_file_atomically(missing, "x"), attn::IOError,
                           missing + ": cannot write: No such file or directory");
  CHECK(io::write_error_cause(ENOSPC) == "no space left on the device (ENOSPC)");
  CHECK(io::write_error_cause(EROFS) == "the file system is read-only (EROFS)");
}

TEST_CASE("write_file_atomically: a file replaced keeps its permissions; a new one gets 0644 less the umask") {
  TempDir dir;
  const std::string path = dir.file("private.txt");
  io::write_file_atomically(path, "secret");
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  io::write_file_atomically(path, "still secret");
  CHECK(fs::status(path).permissions() == (fs::perms::owner_read | fs::perms::owner_write));
  const mode_t mask = ::umask(0);
  ::umask(mask);
  io::write_file_atomically(dir.file("new.txt"), "x");
  CHECK(fs::status(dir.file("new.txt")).permissions() == static_cast<fs::perms>(0644 & ~mask));
}
