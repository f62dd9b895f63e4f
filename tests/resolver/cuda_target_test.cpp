#include "kernelhub/resolver/cuda_target.hpp"

#include <catch2/catch.hpp>

namespace kernelhub::resolver {
namespace {

TEST_CASE("CUDA targets parse and print back exactly") {
  for (const char* name : {"sm_80", "sm_90", "sm_90a", "sm_100f", "sm_103", "sm_120a", "sm_121", "compute_90",
                           "compute_100a", "compute_103f", "compute_75"}) {
    INFO(name);
    const auto t = CudaTarget::parse(name);
    REQUIRE(t.has_value());
    CHECK(t->to_string() == name);
  }
  const auto t = CudaTarget::parse("sm_103f").value();
  CHECK(t.kind == CudaCodeKind::kSass);
  CHECK(t.arch == ComputeCapability{10, 3});
  CHECK(t.suffix == CudaArchSuffix::kFamily);
  CHECK(t.sm() == 103);
  CHECK(CudaTarget::parse("compute_120a")->kind == CudaCodeKind::kPtx);
}

TEST_CASE("malformed CUDA targets are rejected") {
  for (const char* name : {"", "sm_", "sm_9", "sm_9000", "sm_90x", "sm_90aa", "compute_", "gfx90a", "sm_-90",
                           "SM_90", "sm_90 ", "compute_ 90",
                           // Found by fuzz/variant_fuzzer: leading zeros parsed but did not print back.
                           "compute_060", "sm_090", "sm_0100"}) {
    INFO(name);
    const auto t = CudaTarget::parse(name);
    REQUIRE_FALSE(t.has_value());
    CHECK(t.error().code == ErrorCode::kInvalidArgument);
  }
}

TEST_CASE("metadata.json backend.archs entries expand to SASS and PTX targets") {
  const auto names = [](std::string_view entry) {
    std::vector<std::string> out;
    const auto parsed = parse_cuda_arch(entry);
    REQUIRE(parsed.has_value());
    for (const auto& t : *parsed) out.push_back(t.to_string());
    return out;
  };
  CHECK(names("8.0") == std::vector<std::string>{"sm_80"});
  CHECK(names("9.0+PTX") == std::vector<std::string>{"sm_90", "compute_90"});
  CHECK(names("9.0a") == std::vector<std::string>{"sm_90a"});
  CHECK(names("10.0f") == std::vector<std::string>{"sm_100f"});
  CHECK(names("12.1+PTX") == std::vector<std::string>{"sm_121", "compute_121"});
  CHECK(names("sm_90a") == std::vector<std::string>{"sm_90a"});
  CHECK(names("compute_80") == std::vector<std::string>{"compute_80"});

  const auto all = parse_cuda_archs({"7.5", "8.0", "9.0", "12.0+PTX"}).value();
  CHECK(all.size() == 5);

  for (const char* bad : {"", "9", "9.", ".0", "9.10", "9.0+", "9.0+SASS", "gfx90a", "9.0b", "1000.0", "9.0a+PTXa", "09.0", "012.0"}) {
    INFO(bad);
    const auto r = parse_cuda_arch(bad);
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::Contains("backend.archs") || Catch::Contains("not a CUDA target"));
  }
  CHECK_FALSE(parse_cuda_archs({"8.0", "nonsense"}).has_value());
}

}  // namespace
}  // namespace kernelhub::resolver
