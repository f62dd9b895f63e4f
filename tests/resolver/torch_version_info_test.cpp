#include "kernelhub/resolver/internal/torch_version_info.hpp"

#include <catch2/catch.hpp>

namespace kernelhub::resolver {
namespace {

TEST_CASE("torch's version attributes become the runtime the kernels package reads from them") {
  const auto cuda = TorchVersionInfo{"2.9.0+cu128", "12.8", std::nullopt, std::nullopt, true}.runtime().value();
  CHECK(cuda.version == std::optional<Version>(Version{2, 9}));
  CHECK(cuda.backend == Backend{BackendKind::kCuda, Version{12, 8}});
  CHECK(cuda.cxx11_abi == std::optional<bool>(true));

  const auto rocm = TorchVersionInfo{"2.8.0+rocm6.4", std::nullopt, "6.4.43482-0f2d60242", std::nullopt, {}}.runtime();
  CHECK(rocm.value().backend == Backend{BackendKind::kRocm, Version{6, 4}});
  // As kernels prints it in a reason: Version("6.4.43482").
  CHECK(rocm.value().backend.version_text == "6.4.43482");
  // torch >= 2.10 names the ROCm release, which kernels prefers to HIP's version.
  const auto named = TorchVersionInfo{"2.10.0+rocm7.1", std::nullopt, "7.0.51831-a3e329ad8", std::nullopt, {}, "7.1.0"};
  CHECK(named.runtime().value().backend == Backend{BackendKind::kRocm, Version{7, 1}});
  CHECK(named.runtime().value().backend.version_text == "7.1.0");
  // oneAPI's build date: characters 0-3 and 5, as kernels/backends.py reads it.
  const auto xpu = TorchVersionInfo{"2.9.0+xpu", std::nullopt, std::nullopt, "20250100", {}}.runtime();
  CHECK(xpu.value().backend == Backend{BackendKind::kXpu, Version{2025, 1}});
  const auto cpu = TorchVersionInfo{"2.9.0+cpu", std::nullopt, std::nullopt, std::nullopt, {}}.runtime();
  CHECK(cpu.value().backend == Backend{});
}

TEST_CASE("an attribute that does not parse is named") {
  const auto version = TorchVersionInfo{"nightly", std::nullopt, std::nullopt, std::nullopt, {}}.runtime();
  REQUIRE_FALSE(version.has_value());
  CHECK_THAT(version.error().message, Catch::StartsWith("torch.__version__: `nightly`"));
  const auto xpu = TorchVersionInfo{"2.9.0", std::nullopt, std::nullopt, "2025.1", {}}.runtime();
  REQUIRE_FALSE(xpu.has_value());
  CHECK_THAT(xpu.error().message, Catch::StartsWith("torch.version.xpu: `2025.1`"));
}

}  // namespace
}  // namespace kernelhub::resolver
