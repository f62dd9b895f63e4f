#include "kernelhub/metadata.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

namespace kernelhub {
namespace {

TEST_CASE("metadata.json fields are read as kernel-builder writes them") {
  const auto m = Metadata::parse(R"({"name": "relu", "id": "_relu_cuda_abc1234", "version": 2,
      "backend": {"type": "cuda", "archs": ["8.0", "9.0+PTX"]},
      "digest": {"algorithm": "sha256", "files": {"__init__.py": "AAAA"}}})")
                     .value();
  CHECK(m.name == "relu");
  CHECK(m.id == "_relu_cuda_abc1234");
  CHECK(m.version == std::optional<int>(2));
  CHECK(m.backend == "cuda");
  CHECK(m.archs == std::vector<std::string>{"8.0", "9.0+PTX"});
  CHECK(m.digest.at("__init__.py") == "AAAA");
}

TEST_CASE("malformed metadata is kCorruptFile naming the problem") {
  struct Case {
    const char* json;
    const char* why;
  };
  for (auto [json, why] : {Case{"not json", "not JSON"}, Case{"[1]", "not a JSON object"},
                           Case{R"({"id": "_x"})", "`name` is missing"}, Case{R"({"name": "x"})", "`id`"},
                           Case{R"({"name": "x", "id": "../../etc"})", "not a valid namespace"},
                           Case{R"({"name": "x", "id": "_x", "digest": {"algorithm": "md5", "files": {}}})", "md5"}}) {
    INFO(json);
    const auto m = Metadata::parse(json);
    REQUIRE_FALSE(m.has_value());
    CHECK(m.error().code == ErrorCode::kCorruptFile);
    CHECK_THAT(m.error().message, Catch::Contains(why));
  }
}

TEST_CASE("the digest covers every file but metadata.json and bytecode, and any change is named") {
  const auto dir = std::filesystem::temp_directory_path() / ("kh_digest_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "sub");
  std::filesystem::create_directories(dir / "__pycache__");
  std::ofstream(dir / "a.py") << "hello\n";
  std::ofstream(dir / "sub" / "b.so") << "x\n";
  std::ofstream(dir / "metadata.json") << "{}";
  std::ofstream(dir / "__pycache__" / "a.cpython-311.pyc") << "bytecode";
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

TEST_CASE("hostile metadata.json is kCorruptFile, not an exception or a stack overflow (fuzz/)") {
  const auto wrong_type = Metadata::parse(R"({"name": "x", "id": "x", "digest": {"algorithm": 1, "files": {}}})");
  REQUIRE_FALSE(wrong_type.has_value());
  CHECK(wrong_type.error().code == ErrorCode::kCorruptFile);
  CHECK_THAT(wrong_type.error().message, Catch::Contains("`algorithm` is not a string"));

  const std::string deep =
      R"({"name": "x", "id": "x", "extra": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  const auto nested = Metadata::parse(deep);
  REQUIRE_FALSE(nested.has_value());
  CHECK(nested.error().code == ErrorCode::kCorruptFile);
  CHECK_THAT(nested.error().message, Catch::Contains("nested more than 32 levels"));
}

}  // namespace
}  // namespace kernelhub
