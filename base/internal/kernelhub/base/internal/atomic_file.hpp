// Atomic file writes: every file that others read while we write it (cache refs and trees, lock
// files, signatures, the server's store) is published through these.
//
// Note [Atomic publish]: a file appears under its name only by rename(2) of a complete file with a
// name no other writer uses, so a reader (ours or another process's, such as huggingface_hub)
// never sees a partial one, and two writers never write into one file. Whatever fails before the
// rename removes the temp file. How much survives a crash is the caller's choice (Durability): a
// cache can fetch again, a store cannot.
//
// Thread safety: a TempFile is used by one thread at a time; the free functions are safe from any
// thread and process (they rely on rename atomicity). Everything here touches disk.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string_view>

#include "kernelhub/base/internal/unique_fd.hpp"
#include "kernelhub/base/result.hpp"

namespace kernelhub {

enum class Durability {
  kNone,  // atomic only: after a crash the file may be old or missing (a cache entry)
  kData,  // fdatasync the content before the rename
  kFull,  // fsync the file before the rename and its folder after it (a store's record)
};

// A new file with a unique name, removed on destruction unless it was committed (renamed over
// its target) or the caller moved it away itself.
class TempFile {
 public:
  // `<target>.<8 random hex>.tmp`, beside `target`: the same folder, so the rename is atomic.
  // Errors: kNotFound (no such folder), kIo.
  static Result<TempFile> create_beside(const std::filesystem::path& target, unsigned mode = 0644);
  // `<dir>/tmp-<24 random hex>`, for a store that stages files in a folder of its own (which must
  // be on the targets' filesystem). Errors: kNotFound, kIo.
  static Result<TempFile> create_in(const std::filesystem::path& dir, unsigned mode = 0644);

  ~TempFile();
  TempFile(TempFile&& other) noexcept;
  TempFile& operator=(TempFile&&) = delete;

  int fd() const { return fd_.get(); }
  const std::filesystem::path& path() const { return path_; }

  // All of `size` bytes, retrying short writes. Errors: kIo (disk full, ...).
  Status write(const void* data, std::size_t size);
  Status write(std::string_view bytes) { return write(bytes.data(), bytes.size()); }
  // Syncs as `durability` asks and closes; the file stays until commit_to() or destruction.
  // Errors: kIo.
  Status finish(Durability durability);
  // finish(), then renames the file over `target` (Note [Atomic publish]). Errors: kIo.
  Status commit_to(const std::filesystem::path& target, Durability durability);

 private:
  static Result<TempFile> open_exclusive(std::filesystem::path path, unsigned mode);
  TempFile(UniqueFd fd, std::filesystem::path path) : fd_(std::move(fd)), path_(std::move(path)) {}
  UniqueFd fd_;
  std::filesystem::path path_;
};

struct AtomicWrite {
  Durability durability = Durability::kNone;
  std::filesystem::path staging_dir;  // where the temp file is made; empty: beside the target
  unsigned mode = 0644;
};

// Writes `content` to `target` through a temp file and rename (Note [Atomic publish]), creating
// `target`'s folders first. Errors: kIo.
Status write_file_atomic(const std::filesystem::path& target, std::string_view content, const AtomicWrite& how = {});

// Renames the complete file (or symlink) `from` over `to`; with kFull also fsyncs `to`'s folder.
// When the rename fails, `from` is removed. Errors: kNotFound, kIo.
Status rename_into_place(const std::filesystem::path& from, const std::filesystem::path& to,
                         Durability durability = Durability::kNone);

// `<target>.<8 random hex>.tmp`: a name beside `target` that no other writer uses.
std::filesystem::path temp_path_beside(const std::filesystem::path& target);

// fsyncs a folder so that a rename into it survives a crash. Errors: kNotFound, kIo.
Status fsync_directory(const std::filesystem::path& dir);

// Writes all of `bytes` to `fd`, retrying short writes and EINTR; `path` names the file in the
// error. Errors: kIo.
Status write_fully(int fd, std::string_view bytes, const std::filesystem::path& path);

}  // namespace kernelhub
