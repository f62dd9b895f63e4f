#include "kernelhub/resolver/variant.hpp"

#include <catch2/catch.hpp>

namespace kernelhub::resolver {
namespace {

TEST_CASE("every variant form the kernels package knows parses and prints back exactly") {
  const char* names[] = {
      "torch215-cxx11-cpu-x86_64-linux",     "torch27-cxx11-cu128-x86_64-linux", "torch26-cxx98-cu118-x86_64-linux",
      "torch210-cu128-x86_64-windows",       "torch29-metal-aarch64-darwin",     "torch212-cxx11-rocm71-x86_64-linux",
      "torch213-cxx11-xpu20260-x86_64-linux", "torch212-cxx11-cu130-aarch64-linux",
      "torch-stable-abi211-cu126-x86_64-linux", "tvm-ffi01-cu126-x86_64-linux", "torch212-cxx11-cann81-aarch64-linux",
      "torch212-cxx11-neuron-x86_64-linux",  "torch212-cxx11-tpu-x86_64-linux",   "torch-cpu", "torch-cuda",
      "torch-rocm", "torch-xpu", "torch-metal", "torch-npu", "torch-neuron", "torch-tpu", "torch-universal"};
  for (const char* name : names) {
    INFO(name);
    const auto v = Variant::parse(name);
    REQUIRE(v.has_value());
    CHECK(v->to_string() == name);
  }
}

TEST_CASE("variant components are read as the kernels package reads them") {
  const auto v = Variant::parse("torch215-cxx11-cu128-x86_64-linux").value();
  CHECK(v.framework == Framework::kTorch);
  CHECK(v.framework_version == Version{2, 15});
  CHECK(v.cxx11_abi == std::optional<bool>(true));
  CHECK(v.backend.kind == BackendKind::kCuda);
  CHECK(v.backend.version == std::optional<Version>(Version{12, 8}));
  CHECK(v.cpu == "x86_64");
  CHECK(v.os == "linux");

  const auto xpu = Variant::parse("torch213-cxx11-xpu20253-x86_64-linux").value();
  CHECK(xpu.backend.version == std::optional<Version>(Version{2025, 3}));
  CHECK_FALSE(Variant::parse("torch210-cu128-x86_64-windows")->cxx11_abi.has_value());
  CHECK(Variant::parse("torch-stable-abi211-cu126-x86_64-linux")->framework_version == Version{2, 11});
}

TEST_CASE("malformed variant names are rejected with the reason, never a crash") {
  struct Case {
    const char* name;
    const char* why;
  };
  for (auto [name, why] : {Case{"", "start with torch"}, Case{"torch", "bad torch version"},
                           Case{"torch2-cpu-x86_64-linux", "bad torch version"},
                           Case{"torch215-cxx11-cuda-x86_64-linux", "unknown backend"},
                           Case{"torch215-cxx11-cpu-riscv-linux", "unknown cpu"},
                           Case{"torch215-cxx11-cpu-x86_64-plan9", "unknown os"},
                           Case{"torch215-cxx11-cpu-x86_64", "expected <backend>-<cpu>-<os>"},
                           Case{"torch-gpu", "unknown noarch backend"}, Case{"../etc", "start with torch"},
                           Case{"torch215-cxx11-cu-x86_64-linux", "unknown backend"},
                           // Leading zeros would not print back as read.
                           Case{"torch106-cxx11-cpu-x86_64-linux", "bad torch version"},
                           Case{"torch215-cxx11-cu0128-x86_64-linux", "unknown backend"}}) {
    INFO(name);
    const auto v = Variant::parse(name);
    REQUIRE_FALSE(v.has_value());
    CHECK(v.error().code == ErrorCode::kInvalidArgument);
    CHECK_THAT(v.error().message, Catch::Contains(why));
  }
  CHECK_FALSE(Variant::parse(std::string(4096, 'a')).has_value());
}

TEST_CASE("environment backends parse in the KERNELHUB_BACKEND form") {
  CHECK(Backend::parse_environment("cuda12.8")->to_token() == "cu128");
  CHECK(Backend::parse_environment("rocm7.1")->to_token() == "rocm71");
  CHECK(Backend::parse_environment("xpu2025.3")->to_token() == "xpu20253");
  CHECK(Backend::parse_environment("cpu")->to_token() == "cpu");
  CHECK(Backend::parse_environment("metal")->to_environment() == "metal");
  CHECK_FALSE(Backend::parse_environment("cuda").has_value());
  CHECK_FALSE(Backend::parse_environment("gpu").has_value());
}

}  // namespace
}  // namespace kernelhub::resolver
