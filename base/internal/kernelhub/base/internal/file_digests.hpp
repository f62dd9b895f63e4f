// FileDigests: the SHA-256 (and git blob sha1) of files, each read at most once per instance, and
// not at all while a hash remembered from an earlier verification still holds.
//
// One load checks a variant directory up to three times: its signature manifest (sha256), its
// lock-file entry (sha256 of LFS files, git blob sha1 of the others) and metadata.json's digest
// (sha256), each over the same files. A read computes the sha256 and, for a file small enough to
// be a git blob on the Hub (kGitBlobLimit), its git blob sha1 too, so whichever check asks first,
// the others find both. The checks of one load share one
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

#include "kernelhub/base/internal/file_stamp.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "kernelhub/base/result.hpp"

namespace kernelhub {

class FileDigests {
 public:
  // The Hub keeps files above 10 MB in LFS (their etag is a sha256), so a larger file never needs
  // its git sha1; asked for one anyway, it is read again.
  static constexpr std::uint64_t kGitBlobLimit = 10u << 20;

  struct Entry {
    FileStamp stamp;  // of the file when it was hashed
    FileHash hash;

    bool operator==(const Entry&) const = default;
  };

  // The file's SHA-256 and the bytes it covers: remembered while its stamp is unchanged, else
  // read now. Errors: kNotFound, kIo.
  Result<FileHash> hash(const std::filesystem::path& path);
  Result<Sha256Digest> sha256(const std::filesystem::path& path);
  // The file's git blob sha1 (40 hex), from the same read as its sha256. Errors: kNotFound, kIo.
  Result<std::string> git_sha1(const std::filesystem::path& path);

  // Seeds the instance: `hash` holds for the file at `canonical` while its stamp is `stamp`.
  void remember(const std::filesystem::path& canonical, const Entry& entry);

  // Every file hashed or used through this instance, by canonical path: what a verification
  // that used it has proved.
  const std::map<std::filesystem::path, Entry>& used() const { return used_; }

  // Bytes read and hashed so far (each file counted once while it is unchanged).
  std::uint64_t bytes_read() const { return bytes_read_; }

 private:
  // The entry for `path` (remembered or read now); `need_git_sha1` reads a file whose entry lacks it.
  Result<Entry> entry(const std::filesystem::path& path, bool need_git_sha1);

  std::map<std::filesystem::path, Entry> known_;
  std::map<std::filesystem::path, Entry> used_;
  std::uint64_t bytes_read_ = 0;
};

// The SHA-256 of `path` (and the bytes it covers), through `digests` when there is one.
Result<Sha256Digest> sha256_file(const std::filesystem::path& path, FileDigests* digests);
Result<FileHash> hash_file(const std::filesystem::path& path, FileDigests* digests);

}  // namespace kernelhub
