// Metadata: a variant's metadata.json, as kernel-builder writes it (kernels-data metadata.rs):
// name, id (the op namespace and Python module name), version, backend {type, archs}, digest
// {algorithm, files: {relpath: base64}}.
//
// verify_digest() re-hashes the variant directory the way kernels-data's Digest::hash_variant
// does: every file below the directory except metadata.json, metadata.json.sigstore and Python
// bytecode (__pycache__, *.pyc), SHA-256, base64; missing, extra and changed files all fail.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernelhub/base/file_digests.hpp"
#include "kernelhub/base/result.hpp"

namespace kernelhub {

struct Metadata {
  std::string name;
  std::string id;
  std::optional<int> version;
  std::string backend;              // "cpu", "cuda", ...
  std::vector<std::string> archs;   // "8.0", "9.0+PTX", ...
  std::map<std::string, std::string> digest;  // relpath → base64 sha256; empty when absent
  std::string raw;                  // the file as read

  // Errors: kNotFound (no metadata.json), kCorruptFile (malformed, missing `id` or `name`, an `id`
  // that is not a valid namespace).
  static Result<Metadata> read(const std::filesystem::path& variant_dir);
  static Result<Metadata> parse(std::string_view json);
};

// The digest of a variant directory, computed as described above. `digests`, when given, is shared
// with the load's other checks (each file is read once).
Result<std::map<std::string, std::string>> compute_digest(const std::filesystem::path& variant_dir,
                                                          FileDigests* digests = nullptr);

// Errors: kIntegrityMismatch listing every missing, extra or changed file.
Status verify_digest(const std::filesystem::path& variant_dir, const Metadata& metadata,
                     FileDigests* digests = nullptr);

}  // namespace kernelhub
