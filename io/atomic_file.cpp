#include "atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace attn::io {

std::string write_error_cause(int error) {
  switch (error) {
    case ENOSPC: return "no space left on the device (ENOSPC)";
    case EDQUOT: return "the disk quota is used up (EDQUOT)";
    case EROFS: return "the file system is read-only (EROFS)";
    case EACCES: case EPERM: return "permission denied";
    case ELOOP: return "it is a symbolic link, and attn writes no file through a link";
    default: return std::strerror(error);
  }
}

void write_file_atomically(const std::string& path, const std::string& bytes, const AtomicWrite& how) {
  const std::string shown = how.shown.empty() ? path : how.shown;
  static std::atomic<unsigned> counter{0};  // unique per process and call: two writers never share a temporary
  const std::filesystem::path target(path);
  const std::string tmp = (target.parent_path() / ("." + target.filename().string() + ".tmp." +
                                                   std::to_string(::getpid()) + "." + std::to_string(counter++)))
                              .string();
  // A file replaced keeps its permissions (a private 0600 file stays private); a new one gets 0644 less the umask.
  struct stat old {};
  const bool replacing = how.replace && ::lstat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw IOError(shown + ": cannot write: " + write_error_cause(errno));
  if (replacing) (void)::fchmod(fd, old.st_mode & 07777);
  auto fail = [&](int error) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw IOError(shown + ": writing failed: " + write_error_cause(error) +
                  "; nothing was written (the temporary file is removed)");
  };
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(n < 0 ? errno : ENOSPC);
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) fail(errno);  // a full disk may be reported only here
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(tmp.c_str());
    throw IOError(shown + ": writing failed: " + write_error_cause(error) +
                  "; nothing was written (the temporary file is removed)");
  }
  // rename replaces a link in the way rather than following it; RENAME_NOREPLACE keeps a file that appeared meanwhile.
  const int renamed = how.replace ? ::rename(tmp.c_str(), path.c_str())
                                  : ::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE);
  if (renamed != 0) {
    const int error = errno;
    ::unlink(tmp.c_str());
    if (error == EEXIST) throw FileAppeared(shown + ": appeared while attn worked; it is kept");
    throw IOError(shown + ": cannot write: " + write_error_cause(error));
  }
  // The new name itself is on disk only once its folder is: a power cut after rename could otherwise lose it.
  const std::string folder = target.parent_path().empty() ? "." : target.parent_path().string();
  const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    (void)::fsync(dir);  // best effort: some file systems refuse fsync on a folder, and the file is written
    ::close(dir);
  }
}

}  // namespace attn::io
