// FileDigests: the SHA-256 of files, each read once per instance.
//
// One load checks a variant directory up to three times: its signature manifest, its lock-file
// entry and metadata.json's digest, each over the same files (a 100 MB op library was read three
// times). The checks of one load share one FileDigests, so each file is read once. An entry is
// keyed by the file's canonical path and kept with its modification time and the bytes hashed;
// a file whose size or time differs since is read again. An instance lives for one load: every
// load still reads every byte it trusts.
//
// Thread safety: one thread at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>

#include "kernelhub/base/result.hpp"
#include "kernelhub/base/sha256.hpp"

namespace kernelhub {

class FileDigests {
 public:
  // The file's SHA-256 and the bytes it covers, read now or remembered from an earlier call.
  // Errors: kNotFound, kIo.
  Result<FileHash> hash(const std::filesystem::path& path);
  Result<Sha256Digest> sha256(const std::filesystem::path& path);

  // Bytes read so far (each file counted once while it is unchanged).
  std::uint64_t bytes_read() const { return bytes_read_; }

 private:
  struct Entry {
    std::filesystem::file_time_type modified;
    FileHash hash;  // its size: the bytes hashed, which a later stat must match
  };
  std::map<std::filesystem::path, Entry> entries_;
  std::uint64_t bytes_read_ = 0;
};

// The SHA-256 of `path` (and the bytes it covers), through `digests` when there is one.
Result<Sha256Digest> sha256_file(const std::filesystem::path& path, FileDigests* digests);
Result<FileHash> hash_file(const std::filesystem::path& path, FileDigests* digests);

}  // namespace kernelhub
