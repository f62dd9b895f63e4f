#include "kernelhub/resolver/environment.hpp"

#include <catch2/catch.hpp>

namespace kernelhub::resolver {
namespace {

TorchRuntime cuda_torch() { return TorchRuntime{Version{2, 15}, true, Backend{BackendKind::kCuda, Version{13, 2}}}; }

TEST_CASE("detect() names this machine's variant the way kernel-builder does") {
  // No driver is named: a machine without GPUs (like CI) selects CPU variants even for a CUDA torch.
  const auto env = Environment::detect(cuda_torch(), map_environment({{"KERNELHUB_GPUS", ""}})).value();
  CHECK((env.os == "linux"));
  CHECK((env.cpu == "x86_64" || env.cpu == "aarch64"));
  REQUIRE(env.glibc.has_value());
  CHECK(*env.glibc >= Version{2, 17});
  if (!env.cuda_driver) {
    CHECK(env.backend.kind == BackendKind::kCpu);
    CHECK_THAT(env.backend_reason, Catch::Contains("no CUDA driver"));
    CHECK(env.native_variant()->to_string() == "torch215-cxx11-cpu-" + env.cpu + "-linux");
  }
}

TEST_CASE("every field can be overridden for another machine") {
  const auto env = Environment::detect(cuda_torch(), map_environment({{"KERNELHUB_OS", "linux"},
                                                                      {"KERNELHUB_CPU", "arm64"},
                                                                      {"KERNELHUB_TORCH", "2.13"},
                                                                      {"KERNELHUB_CXX11_ABI", "1"},
                                                                      {"KERNELHUB_CUDA_DRIVER", "13.0"},
                                                                      {"KERNELHUB_GPUS", "9.0,8.0"},
                                                                      {"KERNELHUB_PYTHON", "3.13t"},
                                                                      {"KERNELHUB_BACKEND", "cuda12.8"}}))
                       .value();
  CHECK(env.cpu == "aarch64");
  CHECK(env.torch == std::optional<Version>(Version{2, 13}));
  CHECK(env.cuda_driver == std::optional<Version>(Version{13, 0}));
  REQUIRE(env.gpus.size() == 2);
  CHECK(env.gpus[0] == ComputeCapability{9, 0});
  CHECK(env.python == std::optional<Version>(Version{3, 13}));
  CHECK(env.python_free_threaded);
  CHECK(env.native_variant()->to_string() == "torch213-cxx11-cu128-aarch64-linux");
}

TEST_CASE("a malformed override is an error naming the variable and the expected form") {
  struct Case {
    const char* name;
    const char* value;
  };
  for (auto [name, value] : {Case{"KERNELHUB_TORCH", "two"}, Case{"KERNELHUB_CXX11_ABI", "yes"},
                             Case{"KERNELHUB_GPUS", "9.0,,8"}, Case{"KERNELHUB_BACKEND", "gpu"},
                             Case{"KERNELHUB_CUDA_DRIVER", "13"}}) {
    INFO(name);
    const auto env = Environment::detect(cuda_torch(), map_environment({{name, value}, {"KERNELHUB_GPUS_", ""}}));
    REQUIRE_FALSE(env.has_value());
    CHECK(env.error().code == ErrorCode::kInvalidArgument);
    CHECK_THAT(env.error().message, Catch::StartsWith(std::string(name) + "=`" + value + "`"));
  }
}

}  // namespace
}  // namespace kernelhub::resolver
