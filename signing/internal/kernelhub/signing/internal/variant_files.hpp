// The files of a variant directory that a signature covers, hashed.
//
// Covered: every file under the directory, recursively, except `.pyc` files inside `__pycache__/`
// (Python writes those next to the sources when it imports the variant; it only uses them when
// they match the sources they cache) and, for a signature inside the folder (layout v1,
// signature_file.hpp), that signature file itself.
//
// Only regular files are accepted. A symlink, a device, a FIFO or a name a manifest cannot hold
// is a problem, with one exception: the Hugging Face cache stores a snapshot as links into the
// repo's blobs/ folder (`<repo>/snapshots/<commit>/<path>` -> `../../blobs/<etag>`), so when the
// directory lies inside a snapshot, a link that resolves to a regular file directly inside that
// `<repo>/blobs/` is followed. Its bytes are then hashed like any other file.
//
// Thread safety: free functions; they only read the disk.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kernelhub/base/internal/file_digests.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/signing/internal/manifest.hpp"
#include "kernelhub/signing/internal/signature_file.hpp"

namespace kernelhub::signing {

struct VariantFiles {
  std::vector<ManifestFile> files;    // sorted by path
  std::vector<std::string> problems;  // one sentence per entry that cannot be covered
};

// Errors: kNotFound (no such directory), kIo. Problems are data, so callers can list them all.
// `digests`, when given, is shared with the load's other checks (each file is read once).
Result<VariantFiles> hash_variant_files(const std::filesystem::path& dir, FileDigests* digests = nullptr,
                                        SignatureLayout layout = SignatureLayout::kV2Beside);

// For a directory inside a Hugging Face cache snapshot: `<repo>/blobs`. Else nullopt.
std::optional<std::filesystem::path> snapshot_blobs_dir(const std::filesystem::path& dir);

// nullopt when `entry` is a regular file, or a snapshot link into `blobs` (see above); else a
// sentence saying what it is. Does not follow any other link.
std::optional<std::string> non_regular_file_problem(const std::filesystem::path& entry,
                                                    const std::optional<std::filesystem::path>& blobs);

}  // namespace kernelhub::signing
