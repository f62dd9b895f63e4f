#include "kernelhub/fetch/variant_checks.hpp"

#include <charconv>
#include <cstdint>
#include <optional>

namespace kernelhub {

namespace {

// "Kernel 'name' variant 'v'", as kernels names a kernel in its checks' messages.
std::string kernels_label(const Metadata& metadata, std::string_view variant) {
  return "Kernel '" + metadata.name + "' variant '" + std::string(variant) + "'";
}

std::string kernelhub_label(const std::filesystem::path& dir, std::string_view variant) {
  return "variant `" + std::string(variant) + "` (`" + dir.string() + "`)";
}

std::string lines(const std::vector<DigestViolation>& violations, Wording wording, std::string_view prefix) {
  std::string out;
  for (const auto& v : violations)
    out += std::string(out.empty() ? "" : "\n") + std::string(prefix) + v.describe(wording);
  return out;
}

// The parts of a dotted number, without trailing zeros; nullopt if it is not one.
std::optional<std::vector<std::uint64_t>> version_parts(std::string_view text) {
  std::vector<std::uint64_t> parts;
  while (true) {
    const auto dot = text.find('.');
    const std::string_view part = text.substr(0, dot);
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size()) return std::nullopt;
    parts.push_back(value);
    if (dot == std::string_view::npos) break;
    text.remove_prefix(dot + 1);
  }
  while (!parts.empty() && parts.back() == 0) parts.pop_back();
  return parts;
}

Status check_kernels_minver(const Metadata& metadata, std::string_view variant, const std::filesystem::path& dir,
                            Wording wording) {
  if (!metadata.kernels_minver || !version_is_newer(*metadata.kernels_minver, kKernelsCompatibleVersion)) return {};
  const std::string& minver = *metadata.kernels_minver;
  const std::string implemented(kKernelsCompatibleVersion);
  if (wording == Wording::kKernels) {
    return unexpected(ErrorCode::kClientTooOld, kernels_label(metadata, variant) + " requires kernels>=" + minver +
                                                    ", but kernelhub implements kernels " + implemented +
                                                    ". Upgrade with: pip install --upgrade kernelhub");
  }
  return unexpected(ErrorCode::kClientTooOld,
                    kernelhub_label(dir, variant) + " needs kernels>=" + minver +
                        " (metadata.json `kernels-minver`), newer than the kernels " + implemented +
                        " loading behaviour this kernelhub implements; upgrade kernelhub, or pick an older version of "
                        "the kernel");
}

Status check_digest(const std::filesystem::path& dir, const Metadata& metadata, std::string_view variant,
                    Wording wording, FileDigests* digests, std::vector<std::string>& warnings) {
  if (!metadata.has_digest) {
    warnings.push_back(wording == Wording::kKernels
                           ? kernels_label(metadata, variant) +
                                 ": the metadata does not record a digest, so its integrity cannot be verified"
                           : kernelhub_label(dir, variant) +
                                 ": metadata.json records no `digest`, so its files cannot be verified; rebuild it "
                                 "with a kernel-builder that writes one");
    return {};
  }
  if (wording != Wording::kKernels) return verify_digest(dir, metadata, digests);
  KH_ASSIGN_OR_RETURN(auto actual, compute_digest(dir, metadata.digest_algorithm, digests));
  const auto violations =
      compare_digests(metadata.digest_algorithm, metadata.digest, metadata.digest_algorithm, actual);
  if (violations.empty()) return {};
  return unexpected(ErrorCode::kIntegrityMismatch,
                    kernels_label(metadata, variant) +
                        ": the files do not match the digest in the metadata, so they may have been modified:\n" +
                        lines(violations, wording, ""));
}

void warn_if_dirty(const Metadata& metadata, std::string_view variant, const std::filesystem::path& dir,
                   Wording wording, std::vector<std::string>& warnings) {
  if (!metadata.provenance || !metadata.provenance->is_dirty()) return;
  std::string sources;
  if (metadata.provenance->kernel && metadata.provenance->kernel->dirty) sources = "kernel source";
  if (metadata.provenance->builder && metadata.provenance->builder->dirty) {
    sources += std::string(sources.empty() ? "" : ", ") + "kernel-builder";
  }
  warnings.push_back(wording == Wording::kKernels
                         ? kernels_label(metadata, variant) + " was built from a dirty git tree (" + sources +
                               " had uncommitted changes). Its recorded git revision does not fully identify the "
                               "sources it was built from, so the build may not be reproducible."
                         : kernelhub_label(dir, variant) + " was built from a dirty git tree (" + sources +
                               " had uncommitted changes): its recorded commits do not fully identify what was built");
}

}  // namespace

std::string DigestViolation::describe(Wording wording) const {
  const bool kernels = wording == Wording::kKernels;
  switch (kind) {
    case Kind::kMissingFile: return kernels ? "Missing file: " + path : "`" + path + "` is missing";
    case Kind::kUnknownFile: return kernels ? "Unknown file: " + path : "`" + path + "` is not listed in the digest";
    case Kind::kHashMismatch: {
      if (kernels) return "File hash mismatch for " + path + ": expected: " + expected + ", got: " + got;
      const char* name = algorithm == DigestAlgorithm::kSha512 ? "sha512" : "sha256";
      return "`" + path + "` has " + name + " " + got + ", metadata.json says " + expected;
    }
    case Kind::kAlgorithmMismatch:
      return kernels ? "Algorithm mismatch: expected: " + expected + ", got: " + got
                     : "the digests use different algorithms (" + expected + " and " + got + ")";
  }
  return {};
}

std::string_view digest_algorithm_name(DigestAlgorithm algorithm) {
  return algorithm == DigestAlgorithm::kSha512 ? "SHA512" : "SHA256";
}

std::vector<DigestViolation> compare_digests(DigestAlgorithm expected_algorithm,
                                             const std::map<std::string, std::string>& expected,
                                             DigestAlgorithm actual_algorithm,
                                             const std::map<std::string, std::string>& actual) {
  using Kind = DigestViolation::Kind;
  if (expected_algorithm != actual_algorithm) {
    return {{Kind::kAlgorithmMismatch, expected_algorithm, "", std::string(digest_algorithm_name(expected_algorithm)),
             std::string(digest_algorithm_name(actual_algorithm))}};
  }
  std::vector<DigestViolation> out;
  for (const auto& [path, hash] : expected) {
    const auto it = actual.find(path);
    if (it == actual.end()) {
      out.push_back({Kind::kMissingFile, expected_algorithm, path, hash, ""});
    } else if (it->second != hash) {
      out.push_back({Kind::kHashMismatch, expected_algorithm, path, hash, it->second});
    }
  }
  for (const auto& [path, hash] : actual) {
    if (!expected.contains(path)) out.push_back({Kind::kUnknownFile, expected_algorithm, path, "", hash});
  }
  return out;
}

bool version_is_newer(std::string_view version, std::string_view than) {
  const auto a = version_parts(version);
  const auto b = version_parts(than);
  return a && b && *a > *b;  // lexicographic over the numbers; 0.19 and 0.19.0 are equal
}

Status check_variant(const std::filesystem::path& dir, const Metadata& metadata, std::string_view variant,
                     Wording wording, FileDigests* digests, std::vector<std::string>& warnings) {
  // As kernels orders its validators: the metadata's (minimum version, dirty build) before the
  // files' (the digest).
  KH_RETURN_IF_ERROR(check_kernels_minver(metadata, variant, dir, wording));
  warn_if_dirty(metadata, variant, dir, wording, warnings);
  return check_digest(dir, metadata, variant, wording, digests, warnings);
}

Status check_same_build(const Metadata& loaded, const Metadata& candidate, const std::filesystem::path& candidate_dir) {
  if (!loaded.has_digest && !candidate.has_digest) return {};  // nothing to compare them by
  const std::string conflict = "Kernel '" + candidate.name + "' at `" + candidate_dir.string() + "` has the same id '" +
                               candidate.id + "' as a kernel that is already loaded, but it is a different build";
  const std::string hint = "Was the kernel modified without rebuilding it with `kernel-builder`?";
  if (!loaded.has_digest) {
    return unexpected(ErrorCode::kIntegrityMismatch,
                      conflict + ": this build has a digest, but the loaded build does not. " + hint);
  }
  if (!candidate.has_digest) {
    return unexpected(ErrorCode::kIntegrityMismatch,
                      conflict + ": the loaded build has a digest, but this build does not. " + hint);
  }
  const auto violations =
      compare_digests(loaded.digest_algorithm, loaded.digest, candidate.digest_algorithm, candidate.digest);
  if (violations.empty()) return {};
  return unexpected(ErrorCode::kIntegrityMismatch, conflict + ". " + hint + "\nDifferences with the loaded build:\n" +
                                                       lines(violations, Wording::kKernels, ""));
}

}  // namespace kernelhub
