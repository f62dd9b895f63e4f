#include "file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace kernelhub::client {

namespace {
int open_lock_file(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0664);
  if (fd >= 0) ::fchmod(fd, 0664);  // filelock's mode, so users sharing a cache can wait on it
  return fd;
}
}  // namespace

std::optional<FileLock> FileLock::try_lock(const std::filesystem::path& path) {
  const int fd = open_lock_file(path);
  if (fd < 0) return FileLock(-1);  // read-only cache or the like: go on without a lock
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int saved = errno;
    ::close(fd);
    if (saved == EWOULDBLOCK) return std::nullopt;
    return FileLock(-1);  // ENOLCK, EINVAL: no flock here
  }
  return FileLock(fd);
}

FileLock FileLock::lock(const std::filesystem::path& path) {
  while (true) {
    if (auto lock = try_lock(path)) return std::move(*lock);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace kernelhub::client
