#include "kernelhub/fetch/internal/variant_checks.hpp"

#include <catch2/catch.hpp>
#include <fstream>

#include "kernels_words.hpp"
#include "same_build.hpp"
#include "support/temp_dir.hpp"

namespace kernelhub {
namespace {

Metadata metadata_with(std::string_view extra) {
  return Metadata::parse(R"({"name": "ab", "id": "_ab_cpu_1", "version": 1, "license": "MIT", "python-depends": [],
                             "backend": {"type": "cpu"})" +
                         std::string(extra) + "}")
      .value();
}

// A variant directory with one file, and metadata.json recording its digest (plus `extra`).
struct Variant {
  testing::TempDir dir{"variant_checks"};
  Metadata metadata;

  explicit Variant(std::string_view extra = "") {
    std::ofstream(dir.path() / "a.py") << "hello\n";
    metadata = metadata_with(std::string(R"(, "digest": {"algorithm": "sha256", "files": {}})") + std::string(extra));
    metadata.digest = compute_digest(dir.path()).value();
  }
  Status check(std::vector<Warning>& warnings) {
    return check_variant(dir.path(), metadata, "torch215-cxx11-cpu-x86_64-linux", nullptr, warnings);
  }
};

TEST_CASE("versions compare as kernels compares them: by number, trailing zeros do not count") {
  CHECK(version_is_newer("0.19.2", "0.19.1"));
  CHECK(version_is_newer("0.20.0", "0.19.1"));
  CHECK(version_is_newer("1.0.0", "0.19.1"));
  CHECK(version_is_newer("0.19.10", "0.19.9"));
  CHECK_FALSE(version_is_newer("0.19.1", "0.19.1"));
  CHECK_FALSE(version_is_newer("0.19.1.0", "0.19.1"));
  CHECK_FALSE(version_is_newer("0.9.99", "0.19.1"));
  CHECK_FALSE(version_is_newer("0.19", "0.19.0"));
  CHECK_FALSE(version_is_newer("0.19.x", "0.19.1"));  // not a version: never newer
  CHECK_FALSE(version_is_newer("", "0.19.1"));
  CHECK_FALSE(version_is_newer("99999999999999999999999.0.0", "0.19.1"));  // overflows: not a version either
}

TEST_CASE("digest violations, in kernels' words and in kernelhub's") {
  const std::map<std::string, std::string> expected{{"a.py", "AAA"}, {"b.so", "BBB"}};
  const std::map<std::string, std::string> actual{{"a.py", "XXX"}, {"c.py", "CCC"}};
  const auto violations = compare_digests(DigestAlgorithm::kSha256, expected, DigestAlgorithm::kSha256, actual);
  std::vector<std::string> kernels, ours;
  for (const auto& v : violations) {
    kernels.push_back(kernels_words::describe(v));
    ours.push_back(v.describe());
  }
  CHECK(kernels == std::vector<std::string>{"File hash mismatch for a.py: expected: AAA, got: XXX",
                                            "Missing file: b.so", "Unknown file: c.py"});
  CHECK(ours == std::vector<std::string>{"`a.py` has sha256 XXX, metadata.json says AAA", "`b.so` is missing",
                                         "`c.py` is not listed in the digest"});
  const auto other = compare_digests(DigestAlgorithm::kSha256, expected, DigestAlgorithm::kSha512, expected);
  REQUIRE(other.size() == 1);
  CHECK(kernels_words::describe(other[0]) == "Algorithm mismatch: expected: SHA256, got: SHA512");
  CHECK(compare_digests(DigestAlgorithm::kSha256, expected, DigestAlgorithm::kSha256, expected).empty());
}

TEST_CASE("a variant whose files match its digest passes with no warning") {
  Variant variant;
  std::vector<Warning> warnings;
  CHECK(variant.check(warnings).has_value());
  CHECK(warnings.empty());
}

TEST_CASE("a changed file fails the digest with kernels' RuntimeError text") {
  Variant variant;
  std::ofstream(variant.dir.path() / "a.py") << "changed\n";
  std::vector<Warning> warnings;
  const auto ours = variant.check(warnings);
  REQUIRE_FALSE(ours.has_value());
  CHECK(ours.error().code == ErrorCode::kIntegrityMismatch);
  CHECK_THAT(kernels_words::message(ours.error()),
             Catch::StartsWith("Kernel 'ab' variant 'torch215-cxx11-cpu-x86_64-linux': the files do not match the "
                               "digest in the metadata, so they may have been modified:\nFile hash mismatch for a.py: "
                               "expected: "));
  CHECK_THAT(ours.error().message,
             Catch::Contains("do not match metadata.json `digest`") && Catch::Contains("`a.py` has sha256"));
}

TEST_CASE("no digest, or a dirty build, loads with a warning") {
  Variant variant(R"(, "provenance": {"kernel-builder": {"version": "0.9", "commit": ")" + std::string(40, 'a') +
                  R"(", "dirty": true}, "kernel": {"commit": ")" + std::string(40, 'b') + R"(", "dirty": true}})");
  variant.metadata.has_digest = false;
  std::vector<Warning> warnings;
  REQUIRE(variant.check(warnings).has_value());
  std::vector<std::string> said;
  for (const Warning& warning : warnings) said.push_back(kernels_words::message(warning));
  // In kernels' order: its metadata validators (the dirty build) before its file validators (the digest).
  CHECK(said == std::vector<std::string>{
                    "Kernel 'ab' variant 'torch215-cxx11-cpu-x86_64-linux' was built from a dirty git tree "
                    "(kernel source, kernel-builder had uncommitted changes). Its recorded git revision does not "
                    "fully identify the sources it was built from, so the build may not be reproducible.",
                    "Kernel 'ab' variant 'torch215-cxx11-cpu-x86_64-linux': the metadata does not record a "
                    "digest, so its integrity cannot be verified"});
}

TEST_CASE("a kernel that needs a newer kernels is refused before its files are hashed") {
  Variant variant(R"(, "kernels-minver": "0.20.0")");
  std::ofstream(variant.dir.path() / "a.py") << "changed\n";  // the minimum version is what it says
  std::vector<Warning> warnings;
  const auto ours = variant.check(warnings);
  REQUIRE_FALSE(ours.has_value());
  CHECK(ours.error().code == ErrorCode::kClientTooOld);
  CHECK(kernels_words::message(ours.error()) ==
        "Kernel 'ab' variant 'torch215-cxx11-cpu-x86_64-linux' requires kernels>=0.20.0, but kernelhub implements "
        "kernels " +
            std::string(kKernelsCompatibleVersion) + ". Upgrade with: pip install --upgrade kernelhub");
  CHECK_THAT(ours.error().message, Catch::Contains("needs kernels>=0.20.0 (metadata.json `kernels-minver`)"));
  Variant same(std::string(R"(, "kernels-minver": ")") + std::string(kKernelsCompatibleVersion) + "\"");
  CHECK(same.check(warnings).has_value());
}

TEST_CASE("a second build with a loaded kernel's id must be that build") {
  const auto with_digest = [](std::string_view hash) {
    auto m = metadata_with(R"(, "digest": {"algorithm": "sha256", "files": {"a.py": "AAA"}})");
    m.digest["a.py"] = std::string(hash);
    return m;
  };
  const auto none = metadata_with("");
  CHECK(kernels_words::check_same_build(with_digest("AAA"), with_digest("AAA"), "/k/v").has_value());
  CHECK(
      kernels_words::check_same_build(none, none, "/k/v").has_value());  // nothing to tell them apart by, as in kernels
  const auto changed = kernels_words::check_same_build(with_digest("AAA"), with_digest("BBB"), "/k/v");
  REQUIRE_FALSE(changed.has_value());
  CHECK(changed.error().code == ErrorCode::kIntegrityMismatch);
  CHECK(changed.error().message ==
        "Kernel 'ab' at `/k/v` has the same id '_ab_cpu_1' as a kernel that is already loaded, but it is a different "
        "build. Was the kernel modified without rebuilding it with `kernel-builder`?\nDifferences with the loaded "
        "build:\nFile hash mismatch for a.py: expected: AAA, got: BBB");
  CHECK_THAT(kernels_words::check_same_build(none, with_digest("AAA"), "/k/v").error().message,
             Catch::Contains(": this build has a digest, but the loaded build does not."));
  CHECK_THAT(kernels_words::check_same_build(with_digest("AAA"), none, "/k/v").error().message,
             Catch::Contains(": the loaded build has a digest, but this build does not."));
}

}  // namespace
}  // namespace kernelhub
