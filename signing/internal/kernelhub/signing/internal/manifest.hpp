// Manifest: what a variant signature covers, as exact bytes (docs/SIGNING.md).
//
//   kernelhub-manifest v1
//   repo org/name
//   version 1                          (`version none` when published to a plain branch)
//   variant torch215-cxx11-cpu-x86_64-linux
//   source-commit 0123abc...           (`source-commit none` when unknown)
//   serial 1764480000
//   file <sha256 hex> <size> <path>    one line per file, sorted bytewise by path, no duplicates
//
// UTF-8, LF line ends, every line terminated. The first line separates these bytes from anything
// else the key might sign. There is no canonicalisation step: to_bytes() is the only writer, and
// parse() accepts exactly what to_bytes() writes (it re-serialises and compares), so a manifest
// has one spelling and the signature covers that spelling.
//
// Thread safety: value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/internal/sha256.hpp"
#include "kernelhub/base/result.hpp"

namespace kernelhub::signing {

inline constexpr std::string_view kManifestTag = "kernelhub-manifest v1";
inline constexpr std::size_t kMaxManifestSize = 16 * 1024 * 1024;

// What a variant is for. Every text field is one token: non-empty, at most 256 bytes, no
// whitespace or control characters.
struct VariantIdentity {
  std::string repo;            // org/name it is published as
  std::optional<int> version;  // the N of branch v<N>; nullopt for another branch
  std::string variant;         // the variant directory name
  std::string source_commit;   // commit of the kernel's source; empty: unknown
  bool operator==(const VariantIdentity&) const = default;
};

struct ManifestFile {
  std::string path;  // relative, `/`-separated (is_safe_manifest_path)
  std::uint64_t size = 0;
  Sha256Digest sha256{};
  bool operator==(const ManifestFile&) const = default;
};

struct Manifest {
  VariantIdentity identity;
  std::uint64_t serial = 0;         // grows with each signing of the same identity
  std::vector<ManifestFile> files;  // sorted by path, unique

  // The canonical bytes. REQUIRES: validate() succeeds.
  std::string to_bytes() const;
  // Token rules, path rules, sorted and unique files. Errors: kInvalidArgument.
  Status validate() const;
  // Strict: an unknown first line, a missing or reordered header, a bad token, path, digest or
  // size, unsorted or duplicate files, a missing final LF. Errors: kCorruptFile.
  static Result<Manifest> parse(std::string_view bytes);
};

// A relative path a manifest may name: non-empty, `/`-separated, no leading `/`, no empty, `.` or
// `..` segment, no `\`, no control character (so no NUL or newline), valid UTF-8, at most 4096 bytes.
bool is_safe_manifest_path(std::string_view path);

// One token of a header line (see VariantIdentity).
bool is_manifest_token(std::string_view text);

}  // namespace kernelhub::signing
