// Durable, atomic file writes (Note [Durable publish] in store.hpp): write to a unique temp file,
// fsync, rename over the target, fsync the directory.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"

namespace kernelhub::server {

// An open file descriptor, closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = other.release();
    }
    return *this;
  }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset();

 private:
  int fd_ = -1;
};

// A temp file under `dir` that is removed on destruction unless committed (renamed away).
class TempFile {
 public:
  // Errors: kIo.
  static Result<TempFile> create(const std::filesystem::path& dir);
  ~TempFile();
  TempFile(TempFile&&) noexcept;
  TempFile& operator=(TempFile&&) = delete;

  int fd() const { return fd_.get(); }
  const std::filesystem::path& path() const { return path_; }
  Status write(const void* data, std::size_t size);
  // fsync and close; the file stays until commit_to() or destruction.
  Status finish();
  // Renames the finished file to `target` and fsyncs target's directory.
  Status commit_to(const std::filesystem::path& target);

 private:
  TempFile(UniqueFd fd, std::filesystem::path path) : fd_(std::move(fd)), path_(std::move(path)) {}
  UniqueFd fd_;
  std::filesystem::path path_;
  bool keep_ = false;
};

// Writes `bytes` to `target` atomically and durably, staging in `tmp_dir`. Errors: kIo.
Status write_file_durably(const std::filesystem::path& target, std::string_view bytes,
                          const std::filesystem::path& tmp_dir);

// fsyncs a directory so a rename into it survives a crash. Errors: kIo.
Status fsync_directory(const std::filesystem::path& dir);

// Reads a whole (small) file. Errors: kNotFound, kIo.
Result<std::string> read_small_file(const std::filesystem::path& path);

// 16 random bytes as 32 hex characters (OpenSSL RAND_bytes).
std::string random_hex(std::size_t bytes = 16);

}  // namespace kernelhub::server
