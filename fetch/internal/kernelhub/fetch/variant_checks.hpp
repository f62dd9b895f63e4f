// The checks every load makes on a variant before anything of it runs, as kernels 0.19 makes them
// (its MinverValidator, DigestValidator and DirtyValidator, and the import's same-build check)
// and never weaker than kernelhub's own:
//
//   kernels-minver   metadata.json asks for a newer `kernels` than the one whose loading
//                    behaviour kernelhub implements (kKernelsCompatibleVersion): kClientTooOld
//                    (kernels raises RuntimeError)
//   digest           every file hashed against metadata.json `digest` on every load (a file
//                    proven unchanged by a verification stamp counts as hashed, fetch.hpp):
//                    kIntegrityMismatch (kernels raises RuntimeError); no digest: a warning
//   provenance       built from a dirty git tree: a warning
//
// kernels 0.19 skips the digest of a Hub kernel it verified before, on the word of a receipt in
// `<cache>/.verified-kernels/digest/v1/`; a receipt says nothing about the bytes on disk now, so
// kernelhub never reads one as proof, and never writes, moves or deletes one (kernels keeps
// reading its own). The messages are kernelhub's, or with Wording::kKernels the kernels
// package's words (validate.py, digest.py, importer.py), which code written for kernels matches.
//
// Thread safety: free functions over values.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/file_digests.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/fetch/metadata.hpp"
#include "kernelhub/fetch/wording.hpp"

namespace kernelhub {

// The `kernels` release whose loading behaviour kernelhub implements (variant names, layouts,
// checks): a kernel whose `kernels-minver` is newer may rely on something kernelhub lacks.
inline constexpr std::string_view kKernelsCompatibleVersion = "0.19.1";

// One way the files of a variant (or a second build's digest) differ from a recorded digest.
struct DigestViolation {
  enum class Kind {
    kMissingFile,        // recorded, not there
    kUnknownFile,        // there, not recorded
    kHashMismatch,       // both, different hashes
    kAlgorithmMismatch,  // the two digests use different algorithms (no file compared)
  };
  Kind kind;
  DigestAlgorithm algorithm;  // the recorded digest's
  std::string path;           // relative to the variant directory; empty for kAlgorithmMismatch
  std::string expected;       // the recorded hash (or algorithm)
  std::string got;            // the actual hash (or algorithm)

  // One line: "`a.py` is missing" (kernelhub), "Missing file: a.py" (kernels).
  std::string describe(Wording wording) const;
};

// `actual` against `expected` (relative path → base64 hash): every missing, unknown and changed
// file, in path order; a different algorithm is one violation and nothing else is compared.
std::vector<DigestViolation> compare_digests(DigestAlgorithm expected_algorithm,
                                             const std::map<std::string, std::string>& expected,
                                             DigestAlgorithm actual_algorithm,
                                             const std::map<std::string, std::string>& actual);

// SHA256 or SHA512, as kernels prints a digest algorithm.
std::string_view digest_algorithm_name(DigestAlgorithm algorithm);

// Whether `version` ("X.Y.Z") is newer than `than` (trailing zeros do not count, as in kernels:
// 0.19 equals 0.19.0). Both must be dotted numbers; anything else compares as not newer.
bool version_is_newer(std::string_view version, std::string_view than);

// The checks above for the variant `variant` in `dir`, whose metadata.json is `metadata`.
// `digests` carries what earlier checks of this load hashed. Warnings (no digest, a dirty build)
// are appended to `warnings`, in the same wording. Errors: kClientTooOld, kIntegrityMismatch,
// and those of hashing the files (kIo, kNotFound).
Status check_variant(const std::filesystem::path& dir, const Metadata& metadata, std::string_view variant,
                     Wording wording, FileDigests* digests, std::vector<std::string>& warnings);

// A process imports one kernel per metadata `id`: a second build with the id of one it already
// imported (`loaded`) must be that build, or the second import would silently get the first's
// code. Same build: equal digests, or neither has one. Errors: kIntegrityMismatch, in the kernels
// package's words (the shim is the only caller).
Status check_same_build(const Metadata& loaded, const Metadata& candidate, const std::filesystem::path& candidate_dir);

}  // namespace kernelhub
