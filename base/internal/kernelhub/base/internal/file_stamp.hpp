// FileStamp: what stat(2) says about a file that changes whenever its content can have changed:
// device, inode, size, modification and change time (nanoseconds). As git's index uses it: a
// file whose stamp equals the one recorded when it was hashed still has that content, because any
// write, truncate, rename over it or chmod updates the change time, which no unprivileged process
// can set back.
//
// Thread safety: a value type.
#pragma once

#include <cstdint>
#include <filesystem>

#include "kernelhub/base/result.hpp"

namespace kernelhub {

struct FileStamp {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint64_t size = 0;
  std::int64_t modified_ns = 0;
  std::int64_t changed_ns = 0;

  bool operator==(const FileStamp&) const = default;

  // stat() of `path`, following symbolic links (a cache snapshot links to its blob).
  // Errors: kNotFound, kIo.
  static Result<FileStamp> of(const std::filesystem::path& path);
};

}  // namespace kernelhub
