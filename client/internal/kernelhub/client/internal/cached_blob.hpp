// Cached blobs checked against their names. A blob is named for its content (blobs/<etag>: the
// sha256 of an LFS file, the git blob sha1 of a regular one, in hex) and stored only once it
// hashed to that name, so a blob that hashes to anything else changed in the cache afterwards (a
// disk error, a tool or a person writing into the cache), whatever the Hub holds: the cure is to
// download it again (`kernelhub download`, `kernelhub cache verify --repair`).
//
// Thread safety: free functions; `digests` is used by one thread at a time.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/internal/file_digests.hpp"
#include "kernelhub/base/result.hpp"

namespace kernelhub::client {

// A cached file whose blob no longer has the content its name says.
struct ChangedBlob {
  std::string path;            // the repo path it is cached under ("" when not known)
  std::filesystem::path blob;  // blobs/<etag>: the hex name it has on disk
  std::string found;           // what its content hashes to now (hex, the same kind as the name)
};

// Disk. Nothing when `file` hashes to `etag` (sha256 for 64 hex, git blob sha1 for 40 hex), else
// what it hashes to. Reads through `digests` when given (a remembered hash of an unchanged file
// is not read again). Errors: kInvalidArgument for an etag that is neither, kNotFound, kIo.
Result<std::optional<std::string>> blob_content_changed(const std::filesystem::path& file, std::string_view etag,
                                                        FileDigests* digests = nullptr);

// "`<what>` changed in the cache: its blob <etag> (<blob path>) now hashes to <found>, not to its
// name". `what` describes the file (its repo path, repo and revision).
std::string changed_in_cache(const ChangedBlob& changed, const std::string& what);

// A file of a cached snapshot: snapshots/<commit>/<path>.
struct SnapshotFile {
  std::string commit;
  std::string path;
};

// One repo's cache folder, every blob hashed (`kernelhub cache verify`).
struct RepoCacheCheck {
  struct Changed {
    ChangedBlob blob;                   // `path` empty: see used_by
    std::vector<SnapshotFile> used_by;  // the snapshot files that link to it (none: unused)
  };
  std::size_t blobs = 0;                       // blobs/<etag> files hashed
  std::uint64_t bytes = 0;                     // their bytes
  std::vector<Changed> changed;                // blobs whose content no longer hashes to their name
  std::vector<SnapshotFile> missing;           // snapshot links to a blob that is gone
  std::vector<std::filesystem::path> partial;  // partial downloads kept to be continued
};

// Disk: reads every blob of `repo_dir` (<cache>/kernels--org--name). Errors: kNotFound when it
// does not exist, kIo when it cannot be read.
Result<RepoCacheCheck> check_cached_repo(const std::filesystem::path& repo_dir);

}  // namespace kernelhub::client
