#include "kernelhub/resolver/variant.hpp"

#include <catch2/catch.hpp>

namespace kernelhub::resolver {
namespace {

TEST_CASE("every variant form the kernels package knows parses and prints back exactly") {
  const char* names[] = {
      // legacy
      "torch215-cxx11-cpu-x86_64-linux", "torch27-cxx11-cu128-x86_64-linux", "torch26-cxx98-cu118-x86_64-linux",
      "torch210-cu128-x86_64-windows", "torch29-metal-aarch64-darwin", "torch212-cxx11-rocm71-x86_64-linux",
      "torch212-cxx11-rocm714-x86_64-linux", "torch213-cxx11-xpu20260-x86_64-linux",
      "torch212-cxx11-cu130-aarch64-linux", "torch-stable-abi211-cu126-x86_64-linux", "tvm-ffi01-cu126-x86_64-linux",
      "torch212-cxx11-cann81-aarch64-linux", "torch212-cxx11-neuron-x86_64-linux", "torch212-cxx11-tpu-x86_64-linux",
      "torch215-cxx11-cpu-riscv64-linux", "torch215-cxx11-cpu-x86_64-plan9",
      // explicit
      "torch-2.15-cxx11-cpu-cpython-3.9-abi3-x86_64-linux", "torch-2.15-cuda-13.0-cpython-3.12-abi3-aarch64-linux",
      "torch-stable-abi-2.11-cuda-13.0-cpython-3.9-abi3-x86_64-linux",
      "tvm-ffi-0.1-cuda-12.8-cpython-3.9-abi3-x86_64-linux",
      "torch-2.16-cxx98-rocm-7.14-cpython-3.15-abi3t-x86_64-linux",
      "torch-2.15-xpu-2025.3-cpython-3.9-abi3-x86_64-linux", "torch-2.15-cann-8.2-cpython-3.9-abi3-aarch64-linux",
      "torch-2.15-metal-cpython-3.10-abi3-aarch64-darwin", "torch-2.15-neuron-cpython-3.9-abi3-x86_64-linux",
      "torch-2.15-tpu-cpython-3.9-abi3-x86_64-linux",
      // noarch
      "torch-cpu", "torch-cuda", "torch-rocm", "torch-xpu", "torch-metal", "torch-npu", "torch-cann", "torch-neuron",
      "torch-tpu", "torch-universal", "torch-", "torch-gpu", "torch-cuda-12", "mlx-metal", "mlx-cpu", "mlx-universal",
      // sdk
      "sdk", "sdk-cuda", "sdk-", "sdk-cpython-3.12-abi3-x86_64-linux", "sdk-cuda-12.8-cpython-3.12-abi3-x86_64-linux",
      "sdk-cpu-cpython-3.15-abi3t-aarch64-linux"};
  for (const char* name : names) {
    INFO(name);
    const auto v = Variant::parse(name);
    REQUIRE(v.has_value());
    CHECK(v->to_string() == name);
    CHECK(Variant::parse(v->to_string()).value() == *v);
  }
}

TEST_CASE("variant components are read as the kernels package reads them") {
  const auto v = Variant::parse("torch215-cxx11-cu128-x86_64-linux").value();
  CHECK(v.framework == Framework::kTorch);
  CHECK(v.form == NameForm::kLegacy);
  CHECK(v.framework_version == Version{2, 15});
  CHECK(v.cxx11_abi == std::optional<bool>(true));
  CHECK(v.backend.kind == BackendKind::kCuda);
  CHECK(v.backend.version == std::optional<Version>(Version{12, 8}));
  CHECK(v.python == PythonAbi{{3, 9}, false});  // a legacy name counts as cpython-3.9-abi3
  CHECK(v.cpu == "x86_64");
  CHECK(v.os == "linux");

  const auto e = Variant::parse("torch-2.15-cxx11-cuda-12.8-cpython-3.9-abi3-x86_64-linux").value();
  CHECK(e.form == NameForm::kExplicit);
  CHECK(e.same_build(v));
  CHECK_FALSE(e == v);
  CHECK_FALSE(Variant::parse("torch-2.15-cxx11-cuda-12.8-cpython-3.10-abi3-x86_64-linux")->same_build(v));

  const auto xpu = Variant::parse("torch213-cxx11-xpu20253-x86_64-linux").value();
  CHECK(xpu.backend.version == std::optional<Version>(Version{2025, 3}));
  CHECK(Variant::parse("torch212-cxx11-rocm714-x86_64-linux")->backend.version == Version{7, 14});
  // cu(\d+)(\d+) is greedy: the minor is the last digit.
  CHECK(Variant::parse("torch212-cxx11-cu1210-x86_64-linux")->backend.version == Version{121, 0});
  CHECK_FALSE(Variant::parse("torch210-cu128-x86_64-windows")->cxx11_abi.has_value());
  CHECK(Variant::parse("torch-stable-abi211-cu126-x86_64-linux")->framework_version == Version{2, 11});
  CHECK(Variant::parse("tvm-ffi012-cu126-x86_64-linux")->framework_version == Version{0, 12});
  const auto abi3t = Variant::parse("torch-2.15-cpu-cpython-3.15-abi3t-x86_64-linux").value();
  CHECK(abi3t.python == PythonAbi{{3, 15}, true});

  const auto noarch = Variant::parse("torch-cuda-12").value();
  CHECK(noarch.framework == Framework::kTorchNoarch);
  CHECK(noarch.noarch_backend == "cuda-12");
  CHECK(Variant::parse("torch-universal")->is_universal());
  CHECK(Variant::parse("mlx-metal")->framework == Framework::kMlxNoarch);
  const auto sdk = Variant::parse("sdk-cpython-3.12-abi3-x86_64-linux").value();
  CHECK(sdk.is_compiled_sdk());
  CHECK(sdk.any_backend);
  CHECK(Variant::parse("sdk")->any_backend);
  CHECK_FALSE(Variant::parse("sdk")->compiled);
}

TEST_CASE("malformed variant names are rejected with the reason, never a crash") {
  struct Case {
    const char* name;
    const char* why;
  };
  for (auto [name, why] : {
           Case{"", "unknown framework"},
           Case{"torch", "unknown framework"},
           Case{"mlx", "unknown framework"},
           Case{"mlx-2.0-cpu-cpython-3.9-abi3-x86_64-linux", "unknown framework"},
           Case{"torch2-cpu-x86_64-linux", "bad torch version"},
           Case{"torch215-cxx11-cuda-x86_64-linux", "bad cuda version"},
           Case{"torch215-cxx11-cpu-x86_64", "missing backend"},
           Case{"torch215-cxx11-x86_64-linux", "missing backend"},
           Case{"../etc", "unknown framework"},
           Case{"torch215-cxx11-cu-x86_64-linux", "bad cuda version"},
           Case{"torch215-cxx11-gpu-x86_64-linux", "unknown backend `gpu`"},
           // A mixed name: a legacy framework with an explicit tail, and the other way round.
           Case{"torch215-cxx11-cuda-12.8-cpython-3.9-abi3-x86_64-linux", "expected one backend token"},
           Case{"torch-2.15-cxx11-cu128-cpython-3.9-abi3-x86_64-linux", "unknown backend `cu128`"},
           Case{"torch-2.15-cxx11-cu128-x86_64-linux", "missing cpython"},
           Case{"torch-2.15-cuda-12.8-cpython-3.9-x86_64-linux", "expected cpython-<M.m>-<abi3|abi3t>"},
           Case{"torch-2.15-cuda-12.8-cpython-3.9-abi4-x86_64-linux", "unknown Python ABI `abi4`"},
           Case{"torch-2.15-cuda-12.8-cpython-3.14-abi3t-x86_64-linux", "abi3t requires Python 3.15"},
           Case{"torch-2.15-cuda-cpython-3.9-abi3-x86_64-linux", "needs its version"},
           Case{"torch-2.15-cpu-1.0-cpython-3.9-abi3-x86_64-linux", "takes no version"},
           Case{"torch-2.15-cuda-13-cpython-3.9-abi3-x86_64-linux", "bad cuda version `13`"},
           Case{"torch-2.15-cpython-3.9-abi3-x86_64-linux", "missing backend"},
           Case{"torch-stable-abi-cu128-x86_64-linux", "bad stable-ABI version"},
           Case{"tvm-ffi-cpu-x86_64-linux", "bad tvm-ffi version"},
           Case{"sdk-cuda-12.8", "expected sdk"},
           Case{"sdk-cuda-cpython-3.9-abi3-x86_64-linux", "needs its version"},
           // Leading zeros would not print back as read (the kernels package reads 2.10 and then
           // looks for a folder that does not exist).
           Case{"torch2010-cxx11-cpu-x86_64-linux", "leading zero"},
           Case{"torch215-cxx11-cu0128-x86_64-linux", "leading zero"},
           Case{"torch-2.010-cpu-cpython-3.9-abi3-x86_64-linux", "leading zero"},
           Case{"torch-2.15-cuda-12.08-cpython-3.9-abi3-x86_64-linux", "leading zero"},
           // Absurd numbers: a typed error, never a wraparound.
           Case{"torch-2.99999999999999999999-cpu-cpython-3.9-abi3-x86_64-linux", "out of range"},
           Case{"torch-2.15-cuda-4294967308.0-cpython-3.9-abi3-x86_64-linux", "out of range"},
           Case{"torch-2.15-cpu-cpython-3.18446744073709551625-abi3-x86_64-linux", "out of range"},
           Case{"torch299999999999-cxx11-cpu-x86_64-linux", "out of range"},
           Case{"torch215-cxx11-cu99999999999999-x86_64-linux", "out of range"},
           Case{"torch-stable-abi-9999999999.1-cpu-cpython-3.9-abi3-x86_64-linux", "out of range"},
           Case{"tvm-ffi09999999999-cpu-x86_64-linux", "out of range"},
       }) {
    INFO(name);
    const auto v = Variant::parse(name);
    REQUIRE_FALSE(v.has_value());
    CHECK(v.error().code == ErrorCode::kInvalidArgument);
    CHECK_THAT(v.error().message, Catch::Contains("is not a build variant name") && Catch::Contains(why));
  }
  const auto long_name = Variant::parse("torch-" + std::string(4096, 'a'));
  REQUIRE_FALSE(long_name.has_value());
  CHECK_THAT(long_name.error().message, Catch::Contains("longer than 255 characters"));
  CHECK(long_name.error().message.size() < 200);
}

TEST_CASE("the biggest numbers that fit parse exactly") {
  const auto v = Variant::parse("torch-999999999.999999999-cuda-999999999.0-cpython-3.999999999-abi3-x86_64-linux");
  REQUIRE(v.has_value());
  CHECK(v->framework_version == Version{999999999, 999999999});
  CHECK(v->backend.version == Version{999999999, 0});
  CHECK(v->python.min == Version{3, 999999999});
}

TEST_CASE("environment backends parse in the KERNELHUB_BACKEND form") {
  CHECK(Backend::parse_environment("cuda12.8")->to_token() == "cu128");
  CHECK(Backend::parse_environment("rocm7.1")->to_token() == "rocm71");
  CHECK(Backend::parse_environment("rocm7.14")->to_token() == "rocm714");
  CHECK(Backend::parse_environment("rocm6.4.043")->version_text == "6.4.43");
  CHECK(Backend::parse_environment("rocm6.4").value() == Backend{BackendKind::kRocm, Version{6, 4}, "6.4.1"});
  CHECK(release_text("6.4.43482-0f2d60242") == "6.4.43482");
  CHECK(release_text("12.08.0") == "12.8.0");
  CHECK(release_text("v1") == "");
  CHECK(Backend::parse_environment("xpu2025.3")->to_token() == "xpu20253");
  CHECK(Backend::parse_environment("cann8.2")->to_token() == "cann82");
  CHECK(Backend::parse_environment("cpu")->to_token() == "cpu");
  CHECK(Backend::parse_environment("metal")->to_environment() == "metal");
  CHECK_FALSE(Backend::parse_environment("cuda").has_value());
  CHECK_FALSE(Backend::parse_environment("gpu").has_value());
  CHECK_FALSE(Backend::parse_environment("npu").has_value());
}

}  // namespace
}  // namespace kernelhub::resolver
