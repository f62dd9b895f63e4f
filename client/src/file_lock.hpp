// FileLock: an exclusive flock(2) on a lock file, the same files huggingface_hub's
// `WeakFileLock` (filelock.FileLock) takes, so our processes and Python's wait for each other.
// Best effort (Note [Atomic publish]): where flock is not supported the lock is a no-op.
#pragma once

#include <filesystem>
#include <optional>

#include "kernelhub/base/result.hpp"

namespace kernelhub::client {

class FileLock {
 public:
  // nullopt when another holder has it. Errors: none; a file system without flock yields a
  // no-op lock.
  static std::optional<FileLock> try_lock(const std::filesystem::path& path);
  // Waits until the lock is free.
  static FileLock lock(const std::filesystem::path& path);

  FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace kernelhub::client
