#include "kernelhub/resolver/internal/torch_spec.hpp"

#include <catch2/catch.hpp>

namespace kernelhub::resolver {
namespace {

TEST_CASE("a torch spec is torch's version, with its backend label when given") {
  const auto bare = TorchSpec::parse("2.9").value();
  CHECK(bare.version == Version{2, 9});
  CHECK_FALSE(bare.backend.has_value());

  // What torch.__version__ prints, pasted as it is: the patch is ignored, the label is the backend.
  const auto cuda = TorchSpec::parse("2.9.1+cu128").value();
  CHECK(cuda.version == Version{2, 9});
  CHECK(cuda.backend == std::optional<Backend>(Backend{BackendKind::kCuda, Version{12, 8}}));
  CHECK(TorchSpec::parse("2.8.0+rocm6.4").value().backend ==
        std::optional<Backend>(Backend{BackendKind::kRocm, Version{6, 4}}));
  CHECK(TorchSpec::parse("2.10.0a0+cpu").value().backend == std::optional<Backend>(Backend{}));
  CHECK(TorchSpec::parse("2.9+xpu2025.1").value().backend ==
        std::optional<Backend>(Backend{BackendKind::kXpu, Version{2025, 1}}));
}

TEST_CASE("a torch spec prints back what it read") {
  for (const char* text : {"2.9", "2.15+cpu", "2.9+cuda12.8", "2.8+rocm6.4", "2.9+xpu2025.1", "2.9+metal"}) {
    CHECK(TorchSpec::parse(text).value().to_string() == text);
  }
  CHECK(TorchSpec::parse("2.9.1+cu128").value().to_string() == "2.9+cuda12.8");
}

TEST_CASE("the torch a spec names has the C++ ABI of that version's wheels, and cpu unless a backend is said") {
  const TorchRuntime new_torch = TorchSpec::parse("2.9").value().runtime();
  CHECK(new_torch.version == std::optional<Version>(Version{2, 9}));
  CHECK(new_torch.cxx11_abi == std::optional<bool>(true));
  CHECK(new_torch.backend == Backend{});
  CHECK(TorchSpec::parse("2.7").value().runtime().cxx11_abi == std::optional<bool>(true));
  CHECK(TorchSpec::parse("2.6+cu124").value().runtime().cxx11_abi == std::optional<bool>(false));
  CHECK(TorchSpec::parse("2.6+cu124").value().runtime().backend == Backend{BackendKind::kCuda, Version{12, 4}});
}

TEST_CASE("a malformed torch spec names what does not parse and the expected form") {
  for (const char* text : {"", "two", "2", "2.9x", "+cu128", "2.9+"}) {
    INFO(text);
    const auto spec = TorchSpec::parse(text);
    REQUIRE_FALSE(spec.has_value());
    CHECK(spec.error().code == ErrorCode::kInvalidArgument);
    CHECK_THAT(spec.error().message, Catch::StartsWith("`" + std::string(text) + "`"));
  }
  CHECK_THAT(TorchSpec::parse("2.9+gpu").error().message, Catch::Contains("`gpu` is not a backend"));
  CHECK_THAT(TorchSpec::parse("2").error().message, Catch::Contains("e.g. 2.9 or 2.9.1+cu128"));
}

TEST_CASE("KERNELHUB_TORCH takes a spec: with a backend it sets torch's backend") {
  const TorchRuntime cpu_torch{Version{2, 15}, true, Backend{}};
  const auto env = Environment::detect(cpu_torch, map_environment({{"KERNELHUB_TORCH", "2.9.1+cu128"},
                                                                   {"KERNELHUB_CUDA_DRIVER", "13.0"},
                                                                   {"KERNELHUB_GPUS", "9.0"}}))
                       .value();
  CHECK(env.torch == std::optional<Version>(Version{2, 9}));
  CHECK(env.torch_backend == Backend{BackendKind::kCuda, Version{12, 8}});
  CHECK(env.native_variant()->to_string() == "torch29-cxx11-cu128-" + env.cpu + "-linux");
  // Without a backend, only the version changes (as before specs had backends).
  const auto version_only =
      Environment::detect(
          cpu_torch,
          map_environment({{"KERNELHUB_TORCH", "2.13"}, {"KERNELHUB_GPUS", "9.0"}, {"KERNELHUB_CUDA_DRIVER", "13.0"}}))
          .value();
  CHECK(version_only.torch_backend == Backend{});
}

}  // namespace
}  // namespace kernelhub::resolver
