// FileDigests: the SHA-256 of files, each read at most once per instance, and not at all while a
// hash remembered from an earlier verification still holds.
//
// One load checks a variant directory up to three times: its signature manifest, its lock-file
// entry and metadata.json's digest, each over the same files. The checks of one load share one
// FileDigests, so each file is read once. An entry is keyed by the file's canonical path and
// kept with the file's stamp (file_stamp.hpp) when it was hashed; a file whose stamp differs is
// read again. remember() seeds an instance with hashes an earlier verification proved (in this
// process, or a verification stamp written by an earlier one): they are used only while the
// file's stamp is exactly the recorded one, so a file changed on disk is always read again.
//
// Thread safety: one thread at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>

#include "kernelhub/base/file_stamp.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/base/sha256.hpp"

namespace kernelhub {

class FileDigests {
 public:
  struct Entry {
    FileStamp stamp;  // of the file when it was hashed
    FileHash hash;
  };

  // The file's SHA-256 and the bytes it covers: remembered while its stamp is unchanged, else
  // read now. Errors: kNotFound, kIo.
  Result<FileHash> hash(const std::filesystem::path& path);
  Result<Sha256Digest> sha256(const std::filesystem::path& path);

  // Seeds the instance: `hash` holds for the file at `canonical` while its stamp is `stamp`.
  void remember(const std::filesystem::path& canonical, const Entry& entry);

  // Every file hashed or used through this instance, by canonical path: what a verification
  // that used it has proved.
  const std::map<std::filesystem::path, Entry>& used() const { return used_; }

  // Bytes read and hashed so far (each file counted once while it is unchanged).
  std::uint64_t bytes_read() const { return bytes_read_; }

 private:
  std::map<std::filesystem::path, Entry> known_;
  std::map<std::filesystem::path, Entry> used_;
  std::uint64_t bytes_read_ = 0;
};

// The SHA-256 of `path` (and the bytes it covers), through `digests` when there is one.
Result<Sha256Digest> sha256_file(const std::filesystem::path& path, FileDigests* digests);
Result<FileHash> hash_file(const std::filesystem::path& path, FileDigests* digests);

}  // namespace kernelhub
