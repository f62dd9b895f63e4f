#include "kernelhub/fetch/internal/variant_checks.hpp"

#include "kernelhub/fetch/internal/problem.hpp"

#include <charconv>
#include <cstdint>
#include <optional>

namespace kernelhub {

namespace {

std::string kernelhub_label(const std::filesystem::path& dir, std::string_view variant) {
  return "variant `" + std::string(variant) + "` (`" + dir.string() + "`)";
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

Status check_kernels_minver(const Metadata& metadata, const CheckedVariant& checked) {
  if (!metadata.kernels_minver || !version_is_newer(*metadata.kernels_minver, kKernelsCompatibleVersion)) return {};
  const std::string& minver = *metadata.kernels_minver;
  return unexpected(problem_error(
      ErrorCode::kClientTooOld,
      kernelhub_label(checked.dir, checked.variant) + " needs kernels>=" + minver +
          " (metadata.json `kernels-minver`), newer than the kernels " + std::string(kKernelsCompatibleVersion) +
          " loading behaviour this kernelhub implements; upgrade kernelhub, or pick an older version of the kernel",
      KernelsTooOld{checked, minver}));
}

Status check_digest(const Metadata& metadata, const CheckedVariant& checked, FileDigests* digests,
                    std::vector<Warning>& warnings) {
  if (!metadata.has_digest) {
    warnings.push_back(problem_warning(kernelhub_label(checked.dir, checked.variant) +
                                           ": metadata.json records no `digest`, so its files cannot be verified; "
                                           "rebuild it with a kernel-builder that writes one",
                                       NoDigest{checked}));
    return {};
  }
  KH_ASSIGN_OR_RETURN(auto actual, compute_digest(checked.dir, metadata.digest_algorithm, digests));
  auto violations = compare_digests(metadata.digest_algorithm, metadata.digest, metadata.digest_algorithm, actual);
  if (violations.empty()) return {};
  std::string message = digest_mismatch_message(checked.dir, violations);
  return unexpected(
      problem_error(ErrorCode::kIntegrityMismatch, std::move(message), DigestMismatch{checked, std::move(violations)}));
}

void warn_if_dirty(const Metadata& metadata, const CheckedVariant& checked, std::vector<Warning>& warnings) {
  if (!metadata.provenance || !metadata.provenance->is_dirty()) return;
  std::string sources;
  if (metadata.provenance->kernel && metadata.provenance->kernel->dirty) sources = "kernel source";
  if (metadata.provenance->builder && metadata.provenance->builder->dirty) {
    sources += std::string(sources.empty() ? "" : ", ") + "kernel-builder";
  }
  warnings.push_back(problem_warning(kernelhub_label(checked.dir, checked.variant) +
                                         " was built from a dirty git tree (" + sources +
                                         " had uncommitted changes): its recorded commits do not fully identify what "
                                         "was built",
                                     DirtyBuild{checked, sources}));
}

}  // namespace

std::string DigestViolation::describe() const {
  switch (kind) {
    case Kind::kMissingFile: return "`" + path + "` is missing";
    case Kind::kUnknownFile: return "`" + path + "` is not listed in the digest";
    case Kind::kHashMismatch: {
      const char* name = algorithm == DigestAlgorithm::kSha512 ? "sha512" : "sha256";
      return "`" + path + "` has " + name + " " + got + ", metadata.json says " + expected;
    }
    case Kind::kAlgorithmMismatch: return "the digests use different algorithms (" + expected + " and " + got + ")";
  }
  return {};
}

std::string digest_mismatch_message(const std::filesystem::path& variant_dir,
                                    const std::vector<DigestViolation>& violations) {
  std::string msg = "the files of `" + variant_dir.string() + "` do not match metadata.json `digest`:";
  for (const auto& v : violations) msg += "\n  - " + v.describe();
  msg += "\nThe variant was modified after it was built; download it again or rebuild it.";
  return msg;
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
                     FileDigests* digests, std::vector<Warning>& warnings) {
  const CheckedVariant checked{metadata.name, std::string(variant), dir};
  // As kernels orders its validators: the metadata's (minimum version, dirty build) before the
  // files' (the digest).
  KH_RETURN_IF_ERROR(check_kernels_minver(metadata, checked));
  warn_if_dirty(metadata, checked, warnings);
  return check_digest(metadata, checked, digests, warnings);
}

}  // namespace kernelhub
