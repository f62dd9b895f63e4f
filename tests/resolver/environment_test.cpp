#include "kernelhub/resolver/environment.hpp"

#include <catch2/catch.hpp>

namespace kernelhub::resolver {
namespace {

TorchRuntime cuda_torch() {
  return TorchRuntime{Version{2, 15}, true, Backend{BackendKind::kCuda, Version{13, 2}}};
}

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

TEST_CASE("the Python given is the Python side, and overrides win over it") {
  const PythonRuntime python{{3, 13}, true, true, Version{0, 1}};
  auto env = Environment::detect(cuda_torch(), map_environment({{"KERNELHUB_GPUS", ""}}), python).value();
  CHECK(env.python == std::optional<Version>(Version{3, 13}));
  CHECK(env.python_free_threaded);
  CHECK(env.mlx);
  CHECK(env.tvm_ffi == std::optional<Version>(Version{0, 1}));
  env = Environment::detect(cuda_torch(),
                            map_environment({{"KERNELHUB_GPUS", ""},
                                             {"KERNELHUB_PYTHON", "3.12"},
                                             {"KERNELHUB_MLX", "0"},
                                             {"KERNELHUB_TVM_FFI", "0.2"},
                                             {"KERNELHUB_MACOS", "26.1"}}),
                            python)
            .value();
  CHECK(env.python == std::optional<Version>(Version{3, 12}));
  CHECK_FALSE(env.python_free_threaded);
  CHECK_FALSE(env.mlx);
  CHECK(env.tvm_ffi == std::optional<Version>(Version{0, 2}));
  CHECK(env.macos == std::optional<Version>(Version{26, 1}));
  env.set_python(std::nullopt);
  CHECK_FALSE(env.python.has_value());
  CHECK_FALSE(env.tvm_ffi.has_value());
  // No Python given: none (a C++ process), so no cpython minimum applies.
  CHECK_FALSE(Environment::detect(cuda_torch(), map_environment({{"KERNELHUB_GPUS", ""}}))->python.has_value());
}

TEST_CASE("a malformed override is an error naming the variable and the expected form") {
  struct Case {
    const char* name;
    const char* value;
  };
  for (auto [name, value] :
       {Case{"KERNELHUB_TORCH", "two"}, Case{"KERNELHUB_CXX11_ABI", "yes"}, Case{"KERNELHUB_GPUS", "9.0,,8"},
        Case{"KERNELHUB_BACKEND", "gpu"}, Case{"KERNELHUB_CUDA_DRIVER", "13"}, Case{"KERNELHUB_MLX", "yes"},
        Case{"KERNELHUB_MACOS", "sequoia"}, Case{"KERNELHUB_PYTHON", "3"}, Case{"KERNELHUB_PYTHON", "3.99999999999"}}) {
    INFO(name);
    const auto env = Environment::detect(cuda_torch(), map_environment({{name, value}}));
    REQUIRE_FALSE(env.has_value());
    CHECK(env.error().code == ErrorCode::kInvalidArgument);
    CHECK_THAT(env.error().message, Catch::StartsWith(std::string(name) + "=`" + value + "`"));
  }
}

}  // namespace
}  // namespace kernelhub::resolver
