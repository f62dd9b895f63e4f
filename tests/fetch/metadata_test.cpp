#include "kernelhub/fetch/metadata.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

namespace kernelhub {
namespace {

// What kernel-builder writes (kernels-data metadata.rs field order), digest and provenance included.
nlohmann::ordered_json kernel_builder_document() {
  return nlohmann::ordered_json::parse(R"({
    "name": "relu", "id": "_relu_cuda_abc1234", "version": 2, "license": "Apache-2.0",
    "python-depends": ["einops"], "kernel-depends": [{"repo-id": "kernels-community/activation", "version": 1}],
    "backend": {"type": "cuda", "archs": ["8.0", "9.0+PTX"]},
    "digest": {"algorithm": "sha256", "files": {"__init__.py": "AAAA"}},
    "provenance": {
      "kernel-builder": {"version": "0.17.0", "commit": "D0610AA58DB33B142C86B59598A2A1C730F52996", "dirty": false},
      "kernel": {"commit": "d45addadb0c380f3d7cc2813310b3bcd75f8aa9a", "dirty": true}}})");
}

Result<Metadata> parse(const nlohmann::ordered_json& document) {
  return Metadata::parse(document.dump());
}

TEST_CASE("metadata.json fields are read as kernel-builder writes them") {
  const auto m = parse(kernel_builder_document()).value();
  CHECK(m.name == "relu");
  CHECK(m.id == "_relu_cuda_abc1234");
  CHECK(m.version == std::optional<std::uint64_t>(2));
  CHECK(m.license == "Apache-2.0");
  CHECK(m.python_depends == std::vector<std::string>{"einops"});
  REQUIRE(m.kernel_depends.size() == 1);
  CHECK(m.kernel_depends[0].repo_id == "kernels-community/activation");
  CHECK(m.kernel_depends[0].version == std::optional<int>(1));
  CHECK(m.backend == "cuda");
  CHECK(m.archs == std::vector<std::string>{"8.0", "9.0+PTX"});
  CHECK(m.has_digest);
  CHECK(m.digest.at("__init__.py") == "AAAA");
  REQUIRE(m.provenance.has_value());
  CHECK(m.provenance->builder_version == "0.17.0");
  CHECK(m.provenance->builder->commit == "d0610aa58db33b142c86b59598a2a1c730f52996");  // lower-cased, as kernels-data
  CHECK(m.provenance->kernel->dirty);
  CHECK(m.provenance->is_dirty());
}

TEST_CASE("older builders' metadata (provenance `sha`, no kernel-depends) and unknown fields are accepted") {
  auto doc = kernel_builder_document();
  doc.erase("kernel-depends");
  doc["provenance"]["kernel-builder"] = {{"version", "0.16.0"}, {"sha", std::string(40, 'a')}, {"dirty", false}};
  doc["provenance"]["kernel"] = {{"sha", std::string(64, 'b')}, {"dirty", false}};
  doc["a-field-from-the-future"] = {{"nested", {1, 2}}};
  doc["backend"]["future"] = true;
  doc["provenance"]["kernel"]["future"] = nullptr;
  const auto m = parse(doc).value();
  CHECK(m.kernel_depends.empty());
  CHECK(m.provenance->builder->commit == std::string(40, 'a'));
  CHECK(m.provenance->kernel->commit == std::string(64, 'b'));
  CHECK_FALSE(m.provenance->is_dirty());
}

TEST_CASE("a missing or mistyped field is kCorruptFile naming the field, what it holds and what was expected") {
  struct Case {
    const char* pointer;           // JSON pointer to change; "" for the whole document
    nlohmann::ordered_json value;  // null with erase = true: remove the field
    bool erase;
    const char* why;
  };
  const std::vector<Case> cases{
      {"/name", nullptr, true, "`name` is missing"},
      {"/id", nullptr, true, "`id` is missing"},
      {"/version", nullptr, true, "`version` is missing"},
      {"/license", nullptr, true, "`license` is missing"},
      {"/python-depends", nullptr, true, "`python-depends` is missing"},
      {"/backend", nullptr, true, "`backend` is missing"},
      {"/backend/type", nullptr, true, "`backend.type` is missing"},
      {"/version", "1", false, "`version` is a string (\"1\"), expected a non-negative integer"},
      {"/version", -1, false, "`version` is the number -1"},
      {"/version", 1.5, false, "`version` is the number 1.5"},
      {"/name", "Relu", false, "`name` `Relu` is not a kernel name"},
      {"/id", "../../etc", false, "not a valid namespace"},
      {"/license", nullptr, false, "`license` is null, expected"},
      {"/python-depends", {1}, false, "`python-depends[]` is the number 1"},
      {"/backend/type", 7, false, "`backend.type` is the number 7"},
      {"/build-layout", "tar", false, "`build-layout` is a string (\"tar\"), expected \"files\" or \"zip\""},
      {"/build-layout", "ZIP", false, "`build-layout` is a string (\"ZIP\")"},
      {"/build-layout", nullptr, false, "`build-layout` is null"},
      {"/backend/archs", "8.0", false, "`backend.archs` is a string"},
      {"/upstream", "ftp://example.com/x", false, "scheme `ftp` is not one of"},
      {"/kernel-depends", nullptr, false, "`kernel-depends` is null"},
      {"/kernel-depends/0/version", nullptr, false, "needs exactly one of `version` and `revision`"},
      {"/kernel-depends/0/rev", "main", false, "unknown field `rev`"},
      {"/digest/algorithm", "md5", false, "`md5` is not supported"},
      {"/digest/files/__init__.py", 1, false, "is the number 1, expected a base64 hash"},
      {"/provenance/kernel-builder", nullptr, true, "`provenance.kernel-builder` is missing"},
      {"/provenance/kernel-builder/dirty", nullptr, true, "`provenance.kernel-builder.dirty` is missing"},
      {"/provenance/kernel/commit", "d0610aa", false, "`provenance.kernel.commit` is a string (\"d0610aa\")"},
      {"/provenance/kernel/dirty", "no", false, "`provenance.kernel.dirty` is a string"},
      {"/kernels-minver", "0.17", false, "`kernels-minver` is a string (\"0.17\"), expected a version"},
  };
  for (const auto& c : cases) {
    auto doc = kernel_builder_document();
    const nlohmann::ordered_json::json_pointer pointer(c.pointer);
    if (c.erase) {
      doc[pointer.parent_pointer()].erase(pointer.back());
    } else {
      doc[pointer] = c.value;
    }
    INFO(doc.dump());
    const auto m = parse(doc);
    REQUIRE_FALSE(m.has_value());
    CHECK(m.error().code == ErrorCode::kCorruptFile);
    CHECK_THAT(m.error().message, Catch::Contains(c.why));
    CHECK_THAT(m.error().message, Catch::Contains("rebuild the variant with kernel-builder"));
  }
}

TEST_CASE("build-layout is files unless it says zip, as kernels 0.19.1 reads it") {
  auto doc = kernel_builder_document();
  CHECK(parse(doc)->build_layout == BuildLayout::kFiles);
  doc["build-layout"] = "files";
  CHECK(parse(doc)->build_layout == BuildLayout::kFiles);
  doc["build-layout"] = "zip";
  CHECK(parse(doc)->build_layout == BuildLayout::kZip);
  CHECK(to_string(BuildLayout::kZip) == "zip");
  CHECK(to_string(BuildLayout::kFiles) == "files");
}

TEST_CASE("an agnostic or unknown backend parses, and fails only where it is acted on, in kernels' words") {
  auto doc = kernel_builder_document();
  doc["backend"] = {{"type", "agnostic"}, {"archs", {"8.0"}}};
  auto agnostic = parse(doc).value();
  CHECK(agnostic.backend == "agnostic");
  CHECK(agnostic.archs.empty());  // as kernels 0.19.1: an agnostic build has none
  CHECK(agnostic.has_known_backend());
  CHECK(agnostic.require_known_backend().has_value());

  // A backend of a newer kernel-builder: its archs (of any shape) are not read.
  doc["backend"] = {{"type", "quantum"}, {"archs", 5}};
  auto unknown = parse(doc).value();
  CHECK(unknown.backend == "quantum");
  CHECK(unknown.archs.empty());
  CHECK_FALSE(unknown.has_known_backend());
  auto used = unknown.require_known_backend();
  REQUIRE_FALSE(used.has_value());
  CHECK(used.error().code == ErrorCode::kIncompatibleBinary);
  CHECK_THAT(used.error().message,
             Catch::Contains("`quantum`") && Catch::Contains("this kernel may require a newer version of `kernels`"));
  // The case matters, as there.
  doc["backend"] = {{"type", "CPU"}};
  CHECK_FALSE(parse(doc)->has_known_backend());
}

TEST_CASE("a known field given twice is refused, as serde refuses it; an unknown one is not") {
  auto with = [](std::string_view field) {
    return Metadata::parse(R"({"name": "ab", "id": "_ab", "version": 1, "license": "MIT", "python-depends": [],
        "backend": {"type": "cpu"}, )" +
                           std::string(field) + "}");
  };
  CHECK_THAT(with(R"("id": "_other")").error().message, Catch::Contains("`id` is given twice"));
  CHECK_THAT(with(R"("provenance": {"kernel-builder": {"version": "1"}, "kernel": {"sha": ")" + std::string(40, 'a') +
                  R"(", "commit": ")" + std::string(40, 'a') + R"(", "dirty": false}})")
                 .error()
                 .message,
             Catch::Contains("`provenance.kernel.commit` is given twice"));
  CHECK(with(R"("x": 1, "x": 2)").has_value());
  CHECK_THAT(with(R"("build-layout": "zip", "build-layout": "files")").error().message,
             Catch::Contains("`build-layout` is given twice"));
  const auto bom = Metadata::parse("\xEF\xBB\xBF" + kernel_builder_document().dump());
  CHECK_THAT(bom.error().message, Catch::Contains("byte order mark"));
}

std::filesystem::path make_variant_dir(std::string_view tag) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("kh_digest_" + std::string(tag) + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "sub");
  std::filesystem::create_directories(dir / "__pycache__");
  std::ofstream(dir / "a.py") << "hello\n";
  std::ofstream(dir / "sub" / "b.so") << "x\n";
  std::ofstream(dir / "metadata.json") << "{}";
  std::ofstream(dir / "__pycache__" / "a.cpython-311.pyc") << "bytecode";
  return dir;
}

TEST_CASE("the digest covers every file but metadata.json and bytecode, and any change is named") {
  const auto dir = make_variant_dir("sha256");
  const auto digest = compute_digest(dir).value();
  // The same values kernels-data's Digest.hash_variant computes for these files.
  CHECK(digest == std::map<std::string, std::string>{{"a.py", "WJG1tSLV3whtD/CxEPvZ0hu0/HFjrzTQgoai6Eb2vgM="},
                                                     {"sub/b.so", "c8s4WKaHqElMozIwUwFigvPa051Cz2LKTnndoqrH2aw="}});
  Metadata m;
  m.digest = digest;
  CHECK(verify_digest(dir, m).has_value());

  std::ofstream(dir / "a.py") << "tampered\n";
  std::ofstream(dir / "extra.py") << "x";
  std::filesystem::remove(dir / "sub" / "b.so");
  const auto bad = verify_digest(dir, m);
  std::filesystem::remove_all(dir);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == ErrorCode::kIntegrityMismatch);
  CHECK_THAT(bad.error().message, Catch::Contains("`a.py` has sha256"));
  CHECK_THAT(bad.error().message, Catch::Contains("`sub/b.so` is missing"));
  CHECK_THAT(bad.error().message, Catch::Contains("`extra.py` is not listed"));
}

TEST_CASE("a sha512 digest is checked with sha512, and a symlink to nothing fails the digest") {
  const auto dir = make_variant_dir("sha512");
  auto m = Metadata::parse(R"({"name": "ab", "id": "_ab", "version": 1, "license": "MIT", "python-depends": [],
      "backend": {"type": "cpu"}, "digest": {"algorithm": "sha512", "files": {}}})")
               .value();
  CHECK(m.digest_algorithm == DigestAlgorithm::kSha512);
  m.digest = compute_digest(dir, DigestAlgorithm::kSha512).value();
  // `printf 'hello\n' | sha512sum`, in base64.
  CHECK(m.digest.at("a.py") ==
        "58IrmUxZ2c8rSOVJseJGZmNgRZMNPafBrLKZ0cO3+TH5Sq5B7dosKyB6NuEPi8uNRSI+VIePWzFufOO2vAGWKQ==");
  CHECK(verify_digest(dir, m).has_value());
  std::filesystem::create_symlink(dir / "gone", dir / "dangling.py");
  const auto dangling = verify_digest(dir, m);
  std::filesystem::remove_all(dir);
  REQUIRE_FALSE(dangling.has_value());
  CHECK_THAT(dangling.error().message, Catch::Contains("`dangling.py`") && Catch::Contains("symlink to nothing"));
}

TEST_CASE("hostile metadata.json is kCorruptFile, not an exception or a stack overflow (fuzz/)") {
  auto doc = kernel_builder_document();
  doc["digest"]["algorithm"] = 1;
  const auto wrong_type = parse(doc);
  REQUIRE_FALSE(wrong_type.has_value());
  CHECK(wrong_type.error().code == ErrorCode::kCorruptFile);
  CHECK_THAT(wrong_type.error().message, Catch::Contains("`digest.algorithm` is the number 1"));

  const std::string deep =
      R"({"name": "x", "id": "x", "extra": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  const auto nested = Metadata::parse(deep);
  REQUIRE_FALSE(nested.has_value());
  CHECK(nested.error().code == ErrorCode::kCorruptFile);
  CHECK_THAT(nested.error().message, Catch::Contains("nested more than 32 levels"));
}

}  // namespace
}  // namespace kernelhub
