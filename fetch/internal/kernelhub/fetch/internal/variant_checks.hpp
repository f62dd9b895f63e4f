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
// reading its own). The messages are kernelhub's; each failure and warning carries its value
// (problem.hpp), from which the Python shim says the kernels package's words (validate.py,
// digest.py), which code written for kernels matches (python/src/core/kernels_words.hpp).
//
// Thread safety: free functions over values.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/error.hpp"
#include "kernelhub/base/internal/file_digests.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/fetch/metadata.hpp"

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

  // One line, in kernelhub's words: "`a.py` is missing".
  std::string describe() const;
};

// `actual` against `expected` (relative path → base64 hash): every missing, unknown and changed
// file, in path order; a different algorithm is one violation and nothing else is compared.
std::vector<DigestViolation> compare_digests(DigestAlgorithm expected_algorithm,
                                             const std::map<std::string, std::string>& expected,
                                             DigestAlgorithm actual_algorithm,
                                             const std::map<std::string, std::string>& actual);

// kernelhub's words for a variant folder whose files differ from its digest (verify_digest's):
// every violation on a line of its own, and what to do.
std::string digest_mismatch_message(const std::filesystem::path& variant_dir,
                                    const std::vector<DigestViolation>& violations);

// SHA256 or SHA512, as kernels prints a digest algorithm.
std::string_view digest_algorithm_name(DigestAlgorithm algorithm);

// Whether `version` ("X.Y.Z") is newer than `than` (trailing zeros do not count, as in kernels:
// 0.19 equals 0.19.0). Both must be dotted numbers; anything else compares as not newer.
bool version_is_newer(std::string_view version, std::string_view than);

// The checks above for the variant `variant` in `dir`, whose metadata.json is `metadata`.
// `digests` carries what earlier checks of this load hashed. Warnings (no digest, a dirty build)
// are appended to `warnings`. Errors: kClientTooOld and kIntegrityMismatch (each with its
// Problem, problem.hpp), and those of hashing the files (kIo, kNotFound).
Status check_variant(const std::filesystem::path& dir, const Metadata& metadata, std::string_view variant,
                     FileDigests* digests, std::vector<Warning>& warnings);

}  // namespace kernelhub
