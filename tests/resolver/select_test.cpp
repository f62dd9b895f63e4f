#include "kernelhub/resolver/select.hpp"

#include <catch2/catch.hpp>

namespace kernelhub::resolver {
namespace {

Environment cuda_machine(Version cuda = {12, 8}) {
  Environment e;
  e.os = "linux";
  e.cpu = "x86_64";
  e.torch = Version{2, 15};
  e.cxx11_abi = true;
  e.torch_backend = Backend{BackendKind::kCuda, cuda};
  e.backend = e.torch_backend;
  e.cuda_driver = Version{13, 0};
  e.python = Version{3, 12};
  return e;
}

std::vector<std::string> order(const std::vector<Decision>& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds) out.push_back(d.name + (d.accepted() ? "" : " x"));
  return out;
}

std::string reason_of(const std::vector<Decision>& ds, const std::string& name) {
  for (const auto& d : ds) {
    if (d.name == name) return to_string(d.reason);
  }
  FAIL("no decision for " << name);
  return {};
}

TEST_CASE("CUDA variants of the same major with an older or equal minor are accepted, newest first") {
  const auto ds = select({"torch215-cxx11-cu126-x86_64-linux", "torch215-cxx11-cu128-x86_64-linux",
                          "torch215-cxx11-cu129-x86_64-linux", "torch215-cxx11-cu130-x86_64-linux"},
                         cuda_machine({12, 8}));
  CHECK(order(ds) == std::vector<std::string>{"torch215-cxx11-cu128-x86_64-linux", "torch215-cxx11-cu126-x86_64-linux",
                                              "torch215-cxx11-cu129-x86_64-linux x",
                                              "torch215-cxx11-cu130-x86_64-linux x"});
  CHECK(to_string(ds[2].reason) == "CUDA version (12.9) is not compatible with system CUDA version (12.8)");
}

TEST_CASE("stable ABI before torch, untagged before tagged, tvm-ffi, compiled sdk, noarch, universal, sdk last") {
  Environment e = cuda_machine();
  e.tvm_ffi = Version{0, 1};
  const auto ds = select(
      {"sdk", "sdk-cuda", "torch-universal", "torch-cuda", "sdk-cpython-3.9-abi3-x86_64-linux",
       "sdk-cuda-12.6-cpython-3.9-abi3-x86_64-linux", "tvm-ffi-0.1-cuda-12.8-cpython-3.9-abi3-x86_64-linux",
       "torch215-cxx11-cu128-x86_64-linux", "torch215-cu128-x86_64-linux", "torch-stable-abi211-cu128-x86_64-linux",
       "torch-stable-abi-2.13-cuda-12.8-cpython-3.9-abi3-x86_64-linux", "torch-stable-abi216-cu128-x86_64-linux"},
      e);
  CHECK(order(ds) == std::vector<std::string>{"torch-stable-abi-2.13-cuda-12.8-cpython-3.9-abi3-x86_64-linux",
                                              "torch-stable-abi211-cu128-x86_64-linux", "torch215-cu128-x86_64-linux",
                                              "torch215-cxx11-cu128-x86_64-linux",
                                              "tvm-ffi-0.1-cuda-12.8-cpython-3.9-abi3-x86_64-linux",
                                              "sdk-cuda-12.6-cpython-3.9-abi3-x86_64-linux",
                                              "sdk-cpython-3.9-abi3-x86_64-linux", "torch-cuda", "torch-universal",
                                              "sdk-cuda", "sdk", "torch-stable-abi216-cu128-x86_64-linux x"});
}

TEST_CASE("within a kind: higher backend minor, then abi3 before abi3t, then the higher cpython minimum") {
  Environment e = cuda_machine({12, 9});
  e.python = Version{3, 15};
  const auto ds = select(
      {"torch-2.15-cuda-12.6-cpython-3.12-abi3-x86_64-linux", "torch-2.15-cuda-12.8-cpython-3.9-abi3-x86_64-linux",
       "torch-2.15-cuda-12.8-cpython-3.15-abi3t-x86_64-linux", "torch-2.15-cuda-12.8-cpython-3.12-abi3-x86_64-linux"},
      e);
  CHECK(order(ds) == std::vector<std::string>{"torch-2.15-cuda-12.8-cpython-3.12-abi3-x86_64-linux",
                                              "torch-2.15-cuda-12.8-cpython-3.9-abi3-x86_64-linux",
                                              "torch-2.15-cuda-12.8-cpython-3.15-abi3t-x86_64-linux",
                                              "torch-2.15-cuda-12.6-cpython-3.12-abi3-x86_64-linux"});
}

TEST_CASE("the legacy and the explicit name of one build: the explicit one is chosen, whatever the listing order") {
  const std::vector<std::string> twins{"torch215-cxx11-cu128-x86_64-linux",
                                       "torch-2.15-cxx11-cuda-12.8-cpython-3.9-abi3-x86_64-linux"};
  for (const auto& names : {twins, std::vector<std::string>{twins[1], twins[0]}}) {
    const auto ds = select(names, cuda_machine());
    REQUIRE(chosen(ds) != nullptr);
    CHECK(chosen(ds)->name == "torch-2.15-cxx11-cuda-12.8-cpython-3.9-abi3-x86_64-linux");
    CHECK(ds[1].accepted());
    CHECK(ds[0].variant->same_build(*ds[1].variant));
    CHECK(format_trace(ds) ==
          "torch-2.15-cxx11-cuda-12.8-cpython-3.9-abi3-x86_64-linux compatible, preferred \u2705\n"
          "torch215-cxx11-cu128-x86_64-linux compatible \u2705\n");
  }
}

TEST_CASE("noarch builds of one backend name: the framework the process has") {
  Environment e = cuda_machine();
  e.mlx = true;
  CHECK(chosen(select({"mlx-cuda", "torch-cuda"}, e))->name == "torch-cuda");
  e.torch.reset();
  CHECK(chosen(select({"mlx-cuda", "torch-cuda"}, e))->name == "mlx-cuda");
  e.mlx = false;
  const auto ds = select({"mlx-cuda", "torch-cuda"}, e);
  CHECK(chosen(ds)->name == "torch-cuda");
  CHECK(reason_of(ds, "mlx-cuda") == "MLX is not installed in the environment");
}

TEST_CASE("Python: the cpython minimum, abi3 refused on free-threaded Python, abi3t for 3.15") {
  Environment e = cuda_machine();
  e.python = Version{3, 11};
  auto ds = select({"torch-2.15-cuda-12.8-cpython-3.12-abi3-x86_64-linux", "torch215-cxx11-cu128-x86_64-linux"}, e);
  CHECK(chosen(ds)->name == "torch215-cxx11-cu128-x86_64-linux");
  CHECK(reason_of(ds, "torch-2.15-cuda-12.8-cpython-3.12-abi3-x86_64-linux") ==
        "Python 3.12 or later is required, system Python version is 3.11");

  e.python = Version{3, 14};
  e.python_free_threaded = true;
  ds = select(
      {"torch215-cxx11-cu128-x86_64-linux", "torch-2.15-cuda-12.8-cpython-3.15-abi3t-x86_64-linux", "torch-cuda"}, e);
  CHECK(chosen(ds)->name == "torch-cuda");
  CHECK(reason_of(ds, "torch215-cxx11-cu128-x86_64-linux") ==
        "abi3 is not supported on free-threaded Python, abi3t is required");
  CHECK(reason_of(ds, "torch-2.15-cuda-12.8-cpython-3.15-abi3t-x86_64-linux") ==
        "Python 3.15 or later is required, system Python version is 3.14");
  e.python = Version{3, 15};
  CHECK(chosen(select({"torch215-cxx11-cu128-x86_64-linux", "torch-2.15-cuda-12.8-cpython-3.15-abi3t-x86_64-linux"}, e))
            ->name == "torch-2.15-cuda-12.8-cpython-3.15-abi3t-x86_64-linux");
  // A C++ process names no Python: no cpython minimum applies.
  e.python.reset();
  e.python_free_threaded = false;
  CHECK(select({"torch-2.15-cuda-12.8-cpython-3.99-abi3-x86_64-linux"}, e, Loadable::cpp_process())[0].accepted());
}

TEST_CASE("ROCm follows the CUDA rule; torch-cann, not torch-npu, is CANN's noarch build") {
  Environment e = cuda_machine();
  e.backend = e.torch_backend = Backend{BackendKind::kRocm, Version{7, 1}};
  auto ds = select({"torch215-cxx11-rocm70-x86_64-linux", "torch215-cxx11-rocm72-x86_64-linux",
                    "torch-2.15-cxx11-rocm-6.4-cpython-3.9-abi3-x86_64-linux", "torch215-cxx11-cu128-x86_64-linux"},
                   e);
  CHECK(order(ds)[0] == "torch215-cxx11-rocm70-x86_64-linux");
  CHECK(reason_of(ds, "torch215-cxx11-rocm72-x86_64-linux") ==
        "ROCm version (7.2) is not compatible with system ROCm version (7.1)");
  CHECK(reason_of(ds, "torch-2.15-cxx11-rocm-6.4-cpython-3.9-abi3-x86_64-linux") ==
        "ROCm version (6.4) is not compatible with system ROCm version (7.1)");
  CHECK(reason_of(ds, "torch215-cxx11-cu128-x86_64-linux") ==
        "backend (cu128) does not match selected backend (rocm71)");
  // torch's ROCm as it says it (hip "6.4.43482-0f2d60242"), as kernels prints it.
  e.backend = e.torch_backend = Backend{BackendKind::kRocm, Version{6, 4}, "6.4.43482"};
  CHECK(reason_of(select({"torch215-cxx11-rocm70-x86_64-linux"}, e), "torch215-cxx11-rocm70-x86_64-linux") ==
        "ROCm version (7.0) is not compatible with system ROCm version (6.4.43482)");

  e.backend = e.torch_backend = Backend{BackendKind::kCann, Version{8, 2}};
  ds = select({"torch-npu", "torch-cann"}, e);
  CHECK(order(ds) == std::vector<std::string>{"torch-cann", "torch-npu x"});
  CHECK(reason_of(ds, "torch-npu") == "backend (npu) does not match system backend (cann) and is not universal");
}

TEST_CASE("a backend mismatch prints the variant's backend in its own form, the selected one as a token") {
  const auto ds =
      select({"torch-2.15-cxx11-cpu-cpython-3.9-abi3-x86_64-linux",
              "torch-2.15-cxx11-xpu-2025.3-cpython-3.9-abi3-x86_64-linux", "torch215-cxx11-cpu-x86_64-linux"},
             cuda_machine());
  CHECK(reason_of(ds, "torch-2.15-cxx11-cpu-cpython-3.9-abi3-x86_64-linux") ==
        "backend (cpu) does not match selected backend (cu128)");
  CHECK(reason_of(ds, "torch-2.15-cxx11-xpu-2025.3-cpython-3.9-abi3-x86_64-linux") ==
        "backend (xpu-2025.3) does not match selected backend (cu128)");
}

TEST_CASE("wrong torch, ABI, cpu, os and unparsable names are rejected with a reason") {
  const auto ds = select({"torch214-cxx11-cu128-x86_64-linux", "torch215-cxx98-cu128-x86_64-linux",
                          "torch215-cxx11-cu128-aarch64-linux", "torch215-cxx11-cu128-x86_64-windows",
                          "torch215-cxx11-cpu-x86_64-linux", "torch215-cxx11-cu128-riscv64-linux", "not-a-variant"},
                         cuda_machine());
  for (const auto& d : ds) CHECK_FALSE(d.accepted());
  CHECK(chosen(ds) == nullptr);
  CHECK(ds.back().name == "not-a-variant");
  const std::string trace = format_trace(ds);
  CHECK_THAT(trace, Catch::Contains("Torch version (2.14) does not match environment Torch version (2.15)"));
  CHECK_THAT(trace, Catch::Contains("Torch CXX11 ABI (False) does not match environment Torch CXX11 ABI (True)"));
  CHECK_THAT(trace, Catch::Contains("CPU (aarch64) does not match system CPU (x86_64)"));
  CHECK_THAT(trace, Catch::Contains("CPU (riscv64) does not match system CPU (x86_64)"));
  CHECK_THAT(trace, Catch::Contains("OS (windows) does not match system OS (linux)"));
  CHECK_THAT(trace, Catch::Contains("backend (cpu) does not match selected backend (cu128)"));
  CHECK_THAT(trace, Catch::Contains("not-a-variant: `not-a-variant` is not a build variant name"));
}

TEST_CASE("a rejection carries what its check compared, not only a sentence") {
  const auto ds = select({"torch215-cxx11-cu129-x86_64-linux", "torch214-cxx11-cu128-x86_64-linux", "torch-rocm",
                          "torch215-cxx11-cu128-x86_64-linux"},
                         cuda_machine({12, 8}));
  // Rejected ones in the kernels package's order too: its key sorts a higher CUDA minor first.
  REQUIRE(order(ds) == std::vector<std::string>{"torch215-cxx11-cu128-x86_64-linux",
                                                "torch215-cxx11-cu129-x86_64-linux x",
                                                "torch214-cxx11-cu128-x86_64-linux x", "torch-rocm x"});
  CHECK(ds[0].reason == Reason(reason::Compatible{}));
  CHECK(ds[1].reason == Reason(reason::CudaVersion{Version{12, 9}, Version{12, 8}}));
  CHECK(ds[2].reason == Reason(reason::TorchVersion{{2, 14}, Version{2, 15}}));
  CHECK(ds[3].reason == Reason(reason::NoarchBackend{"rocm", BackendKind::kCuda}));
  CHECK(reason_code(ds[1].reason) == ReasonCode::kCudaVersion);
  const auto unparsable = select({"not-a-variant"}, cuda_machine());
  CHECK(reason_code(unparsable[0].reason) == ReasonCode::kUnparsableName);
  CHECK_FALSE(unparsable[0].variant.has_value());
}

TEST_CASE("sdk variants: sdk always, sdk-<name> of the selected kind, compiled ones as arch builds") {
  Environment e = cuda_machine();
  const auto ds = select({"sdk", "sdk-cpu", "sdk-cuda", "sdk-cuda-12.9-cpython-3.9-abi3-x86_64-linux",
                          "sdk-cpython-3.13-abi3-x86_64-linux"},
                         e);
  CHECK(order(ds) == std::vector<std::string>{"sdk-cuda", "sdk", "sdk-cuda-12.9-cpython-3.9-abi3-x86_64-linux x",
                                              "sdk-cpython-3.13-abi3-x86_64-linux x", "sdk-cpu x"});
  CHECK(reason_of(ds, "sdk-cpu") == "backend (cpu) does not match system backend (cuda)");
  CHECK(reason_of(ds, "sdk-cuda-12.9-cpython-3.9-abi3-x86_64-linux") ==
        "CUDA version (12.9) is not compatible with system CUDA version (12.8)");
  CHECK(reason_of(ds, "sdk-cpython-3.13-abi3-x86_64-linux") ==
        "Python 3.13 or later is required, system Python version is 3.12");
}

TEST_CASE("Metal builds need macOS 26") {
  Environment e;
  e.os = "darwin";
  e.cpu = "aarch64";
  e.torch = Version{2, 15};
  e.backend = e.torch_backend = Backend{BackendKind::kMetal, {}};
  const std::vector<std::string> names{"torch215-metal-aarch64-darwin", "torch-metal"};
  CHECK(reason_of(select(names, e), "torch215-metal-aarch64-darwin") ==
        "Metal kernels require macOS 26.0 or later, system macOS version is None");
  e.macos = Version{15, 6};
  CHECK(chosen(select(names, e))->name == "torch-metal");
  e.macos = Version{26, 1};
  CHECK(chosen(select(names, e))->name == "torch215-metal-aarch64-darwin");
}

TEST_CASE("a C++ process with LibTorch rejects pure-Python and sdk variants, and tvm-ffi without a loader") {
  Environment e = cuda_machine();
  e.tvm_ffi = Version{0, 1};
  const std::vector<std::string> names{"torch-universal", "torch-cuda", "sdk", "tvm-ffi01-cu128-x86_64-linux",
                                       "torch215-cxx11-cu128-x86_64-linux"};
  auto ds = select(names, e, Loadable::cpp_process());
  CHECK(order(ds)[0] == "torch215-cxx11-cu128-x86_64-linux");
  CHECK(reason_of(ds, "torch-cuda") == "pure-Python variant; only a Python process can load it");
  CHECK(reason_code(ds.back().reason) != ReasonCode::kCompatible);
  CHECK(reason_of(ds, "sdk") == "sdk variant: build-time files for a Python build, not a loadable kernel");
  CHECK(reason_of(ds, "tvm-ffi01-cu128-x86_64-linux") == "tvm-ffi variant; this process has no TVM-FFI loader");
  // With a TVM-FFI loader, tvm-ffi builds rank as the kernels package ranks them: after torch builds.
  ds = select(names, e, Loadable::cpp_process(/*tvm_ffi=*/true));
  CHECK(order(ds)[0] == "torch215-cxx11-cu128-x86_64-linux");
  CHECK(order(ds)[1] == "tvm-ffi01-cu128-x86_64-linux");
}

TEST_CASE("a process without LibTorch considers tvm-ffi builds only, and its trace says so") {
  Environment e = cuda_machine();
  e.torch.reset();
  e.python.reset();
  e.tvm_ffi = Version{0, 1};
  const auto ds = select({"torch-stable-abi211-cu128-x86_64-linux", "torch215-cxx11-cu128-x86_64-linux",
                          "tvm-ffi01-cu128-x86_64-linux", "tvm-ffi02-cu128-x86_64-linux", "torch-cuda"},
                         e, Loadable::torch_free_process());
  CHECK(chosen(ds)->name == "tvm-ffi01-cu128-x86_64-linux");
  const std::string no_libtorch = "needs LibTorch, which this process does not have; only tvm-ffi variants load here";
  CHECK(reason_of(ds, "torch-stable-abi211-cu128-x86_64-linux") == no_libtorch);
  CHECK(reason_of(ds, "torch215-cxx11-cu128-x86_64-linux") == no_libtorch);
  CHECK(reason_of(ds, "tvm-ffi02-cu128-x86_64-linux") ==
        "tvm-ffi version (0.2) does not match environment tvm-ffi version (0.1)");
  CHECK(reason_of(ds, "torch-cuda") == "pure-Python variant; only a Python process can load it");
}

TEST_CASE("tvm-ffi builds need the tvm-ffi version of the environment") {
  Environment e = cuda_machine();
  const std::vector<std::string> names{"tvm-ffi01-cu128-x86_64-linux", "torch-cuda"};
  auto ds = select(names, e);
  CHECK(order(ds) == std::vector<std::string>{"torch-cuda", "tvm-ffi01-cu128-x86_64-linux x"});
  CHECK(to_string(ds[1].reason) == "tvm-ffi version (0.1) does not match environment tvm-ffi version (None)");
  e.tvm_ffi = Version{0, 1};
  ds = select(names, e);
  CHECK(order(ds) == std::vector<std::string>{"tvm-ffi01-cu128-x86_64-linux", "torch-cuda"});
  CHECK(Variant::parse("tvm-ffi012-cpu-x86_64-linux")->framework_version == Version{0, 12});
}

TEST_CASE("off Linux the C++ ABI is unknown, so ABI-tagged variants do not fit") {
  Environment e = cuda_machine();
  e.os = "windows";
  const auto ds = select({"torch215-cxx11-cu128-x86_64-windows", "torch215-cu128-x86_64-windows"}, e);
  CHECK(order(ds) ==
        std::vector<std::string>{"torch215-cu128-x86_64-windows", "torch215-cxx11-cu128-x86_64-windows x"});
  CHECK(to_string(ds[1].reason) == "Torch CXX11 ABI (True) does not match environment Torch CXX11 ABI (None)");
}

TEST_CASE("the order does not depend on the order of the listing") {
  std::vector<std::string> names{"torch-universal",
                                 "torch-cuda",
                                 "torch215-cu128-x86_64-linux",
                                 "torch-2.15-cuda-12.8-cpython-3.9-abi3-x86_64-linux",
                                 "torch215-cxx11-cu126-x86_64-linux",
                                 "torch-stable-abi211-cu126-x86_64-linux",
                                 "torch-stable-abi-2.11-cuda-12.6-cpython-3.9-abi3-x86_64-linux",
                                 "bogus",
                                 "torch214-cu128-x86_64-linux"};
  const auto reference = order(select(names, cuda_machine()));
  std::sort(names.begin(), names.end());
  do {
    CHECK(order(select(names, cuda_machine())) == reference);
  } while (std::next_permutation(names.begin(), names.begin() + 4));
}

}  // namespace
}  // namespace kernelhub::resolver
