#include "kernelhub/signing/internal/manifest.hpp"

#include <catch2/catch.hpp>

namespace kernelhub::signing {
namespace {

Manifest sample() {
  Manifest m;
  m.identity = {"acme/reference-kernels", 2, "torch215-cxx11-cpu-x86_64-linux", "0123abc"};
  m.serial = 42;
  m.files = {
      {"__init__.py", 3, sha256("abc")}, {"layers/__init__.py", 0, sha256("")}, {"metadata.json", 2, sha256("{}")}};
  return m;
}

constexpr std::string_view kSampleBytes =
    "kernelhub-manifest v1\n"
    "repo acme/reference-kernels\n"
    "version 2\n"
    "variant torch215-cxx11-cpu-x86_64-linux\n"
    "source-commit 0123abc\n"
    "serial 42\n"
    "file ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad 3 __init__.py\n"
    "file e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 0 layers/__init__.py\n"
    "file 44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a 2 metadata.json\n";

TEST_CASE("a manifest has exactly one spelling, and parse reads it back") {
  REQUIRE(sample().validate().has_value());
  CHECK(sample().to_bytes() == kSampleBytes);
  auto parsed = Manifest::parse(kSampleBytes);
  REQUIRE(parsed.has_value());
  CHECK(parsed->identity == sample().identity);
  CHECK(parsed->serial == 42);
  CHECK(parsed->files == sample().files);
}

TEST_CASE("version and source commit may be absent: written as none") {
  Manifest m = sample();
  m.identity.version.reset();
  m.identity.source_commit.clear();
  const std::string bytes = m.to_bytes();
  CHECK_THAT(bytes, Catch::Contains("\nversion none\n") && Catch::Contains("\nsource-commit none\n"));
  auto parsed = Manifest::parse(bytes);
  REQUIRE(parsed.has_value());
  CHECK_FALSE(parsed->identity.version.has_value());
  CHECK(parsed->identity.source_commit.empty());
}

TEST_CASE("parse refuses every other spelling") {
  const std::string good(kSampleBytes);
  auto replace = [&](std::string_view from, std::string_view to) {
    std::string s = good;
    const auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    s.replace(at, from.size(), to);
    return s;
  };
  const std::string variants[] = {
      replace("kernelhub-manifest v1", "kernelhub-manifest v2"),  // unknown format version
      replace("repo acme", "repo  acme"),                         // whitespace change
      replace("version 2", "version 02"),                         // non-canonical number
      replace("serial 42", "serial -1"),
      replace("ba7816bf", "BA7816BF"),  // upper-case hex
      replace(" 3 __init__.py", " 03 __init__.py"),
      replace("__init__.py\nfile e3b0", "__init__.py\r\nfile e3b0"),  // CRLF
      replace("layers/__init__.py", "../__init__.py"),                // escapes the directory
      replace("layers/__init__.py", "/etc/passwd"),                   // absolute
      replace("layers/__init__.py", "layers\\__init__.py"),           // backslash
      replace("layers/__init__.py", "layers//__init__.py"),           // empty segment
      replace("layers/__init__.py", "./layers/__init__.py"),
      replace("layers/__init__.py", "__init__.py"),  // duplicate
      replace("metadata.json", "a.json"),            // unsorted
      replace("version 2\nvariant", "variant"),      // missing header
      good.substr(0, good.size() - 1),               // no final newline
      good + "\n",                                   // trailing empty line
      "",
  };
  for (const auto& bytes : variants) {
    INFO(bytes);
    auto parsed = Manifest::parse(bytes);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == ErrorCode::kCorruptFile);
  }
}

TEST_CASE("manifest paths: relative, plain, and UTF-8") {
  CHECK(is_safe_manifest_path("a/b.so"));
  CHECK(is_safe_manifest_path("with space/ü.py"));
  CHECK_FALSE(is_safe_manifest_path(""));
  CHECK_FALSE(is_safe_manifest_path("a/../b"));
  CHECK_FALSE(is_safe_manifest_path(".."));
  CHECK_FALSE(is_safe_manifest_path("a/"));
  CHECK_FALSE(is_safe_manifest_path(std::string("a\0b", 3)));
  CHECK_FALSE(is_safe_manifest_path("a\nb"));
  CHECK_FALSE(is_safe_manifest_path("\xff.so"));
  CHECK_FALSE(is_safe_manifest_path("\xc0\xaf"));  // overlong '/'
}

TEST_CASE("validate refuses identities that are not single tokens") {
  Manifest m = sample();
  m.identity.repo = "acme";
  CHECK_FALSE(m.validate().has_value());
  m = sample();
  m.identity.variant = "torch 215";
  CHECK_FALSE(m.validate().has_value());
  m = sample();
  m.identity.source_commit = "none";
  CHECK_FALSE(m.validate().has_value());
}

}  // namespace
}  // namespace kernelhub::signing
