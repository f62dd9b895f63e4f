// Metadata: a variant's metadata.json, read as the `kernels` package reads it. The rules are
// kernels-data's `Metadata` (kernels-data/src/metadata.rs): those of kernels-data 0.16.2, plus what
// the parser inside kernels 0.17.2 adds (`kernel-depends`, `provenance`, `kernels-minver`, backend
// `tpu`) and what kernels 0.19.1's adds (`build-layout`, backend `agnostic`, unknown backends).
// tests/python/test_kernel_builder_metadata.py feeds the same documents to both and to us.
//
//   name            required  a kernel name: ^[a-z][-a-z0-9]*[a-z0-9]$
//   id              required  the op namespace and Python module name
//   version         required  a non-negative integer
//   license         required  a string
//   python-depends  required  a list of strings
//   backend         required  {type: cann|cpu|cuda|metal|neuron|rocm|tpu|xpu|agnostic, archs?: [string]};
//                             another type parses too (a newer kernel-builder's), its archs unread,
//                             and fails only where it is acted on (has_known_backend)
//   upstream        optional  a git URL (https, http, git, ssh, git+ssh, git+https, git+http
//   source          optional    URL, or scp-like user@host:path)
//   kernel-depends  optional  [{repo-id, version | revision}], exactly one of the two
//   digest          optional  {algorithm: sha256|sha512, files: {relpath: base64}}
//   provenance      optional  {kernel-builder: {version, commit?, dirty?}, kernel?: {commit, dirty}};
//                             a commit is 40 or 64 hex digits, `sha` is its older name
//   kernels-minver  optional  "X.Y.Z", the oldest `kernels` that loads the variant
//   build-layout    optional  "files" (the default) or "zip": the Python package is `<id>.zip`
//                             beside the native libraries (zip_layout.hpp); not null, as there
//
// Optional fields may be null. A field this file does not list is ignored (kernel-builder adds
// fields over time); a listed one given twice is refused, as kernels-data refuses it. Stricter than
// kernels-data, on purpose: `id` must be an identifier (it names a module and an op namespace, and
// we look for `<id>.*.so` in the directory), a `kernel-depends` version must fit an int (it names
// branch v<N>), and JSON nested deeper than 32 levels is refused before parsing (fuzz/).
//
// verify_digest() re-hashes the variant directory the way kernels-data's Digest::hash_variant
// does: every file below the directory except the top-level metadata.json and
// metadata.json.sigstore and Python bytecode (__pycache__, *.pyc); missing, extra and changed files
// all fail. A top-level kernelhub.sig is left out too: signature layout v1 put kernelhub's
// signature there (after the digest), and those builds must keep loading; layout v2 puts it beside
// the variant folder, where kernels' own check does not see them (signing/signature_file.hpp).
//
// Thread safety: value types and free functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/fetch/kernel_dependency.hpp"

namespace kernelhub {

class FileDigests;  // base/internal/kernelhub/base/internal/file_digests.hpp

// The state of a git tree something was built from.
struct GitStatus {
  std::string commit;  // 40 or 64 lower-case hex digits
  bool dirty = false;  // tracked files had uncommitted changes
};

// Who built a variant from what (metadata.json `provenance`).
struct Provenance {
  std::string builder_version;       // `kernel-builder.version`
  std::optional<GitStatus> builder;  // `kernel-builder.commit` and `.dirty`, when known
  std::optional<GitStatus> kernel;   // `kernel`: the kernel source, when it was a git tree

  // Whether either tree was dirty: the recorded commits do not fully identify what was built.
  bool is_dirty() const;
};

enum class DigestAlgorithm { kSha256, kSha512 };

// How a variant holds its Python package (metadata.json `build-layout`, kernels 0.19).
enum class BuildLayout {
  kFiles,  // the package's files in the variant directory (or in `<python name>/` inside it)
  kZip,    // `<id>.zip` in the variant directory, its native libraries beside it
};

// "files" or "zip", as metadata.json spells it.
std::string_view to_string(BuildLayout layout);

struct Metadata {
  std::string name;
  std::string id;
  std::optional<std::uint64_t> version;  // set by parse(); empty only for a namespace read from _ops.py
  std::string license;
  std::optional<std::string> upstream;
  std::optional<std::string> source;
  std::vector<std::string> python_depends;
  std::vector<KernelDependency> kernel_depends;
  std::string backend;             // `backend.type` as written: "cpu", "cuda", ..., "agnostic", or unknown
  std::vector<std::string> archs;  // "8.0", "9.0+PTX", ...; empty for agnostic and unknown backends
  bool has_digest = false;         // `digest` is there (its file list may still be empty)
  DigestAlgorithm digest_algorithm = DigestAlgorithm::kSha256;
  std::map<std::string, std::string> digest;  // relpath → base64 hash
  std::optional<Provenance> provenance;
  std::optional<std::string> kernels_minver;  // as written, e.g. "0.17.2"
  BuildLayout build_layout = BuildLayout::kFiles;
  std::string raw;  // the file as read

  // Whether `backend` is one this version knows ("agnostic": built for no backend, counts).
  bool has_known_backend() const;
  // For code that acts on the backend: kIncompatibleBinary, in kernels 0.19.1's words, when
  // it is not one this version knows.
  Status require_known_backend() const;

  // Errors: kNotFound (no metadata.json), kCorruptFile (not what kernel-builder writes: the
  // message names the field, what it holds and what was expected).
  static Result<Metadata> read(const std::filesystem::path& variant_dir);
  static Result<Metadata> parse(std::string_view json);
};

// The digest of a variant directory, computed as described above. `digests`, when given, is shared
// with the load's other checks (each file is read once; SHA-256 only). Errors: kIo, kNotFound, and
// kIntegrityMismatch for a symlink that leads nowhere.
Result<std::map<std::string, std::string>> compute_digest(const std::filesystem::path& variant_dir,
                                                          FileDigests* digests = nullptr);
Result<std::map<std::string, std::string>> compute_digest(const std::filesystem::path& variant_dir,
                                                          DigestAlgorithm algorithm, FileDigests* digests = nullptr);

// Compares the directory with `metadata.digest`, hashed with `metadata.digest_algorithm`.
// Errors: kIntegrityMismatch listing every missing, extra or changed file.
Status verify_digest(const std::filesystem::path& variant_dir, const Metadata& metadata,
                     FileDigests* digests = nullptr);

}  // namespace kernelhub
