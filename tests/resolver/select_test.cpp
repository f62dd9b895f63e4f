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
  return e;
}

std::vector<std::string> order(const std::vector<Decision>& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds) out.push_back(d.name + (d.accepted() ? "" : " x"));
  return out;
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

TEST_CASE("stable ABI before arch, untagged before tagged, noarch and universal last") {
  const auto ds = select({"torch-universal", "torch-cuda", "torch215-cxx11-cu128-x86_64-linux",
                          "torch215-cu128-x86_64-linux", "torch-stable-abi211-cu128-x86_64-linux",
                          "torch-stable-abi213-cu128-x86_64-linux", "torch-stable-abi216-cu128-x86_64-linux"},
                         cuda_machine());
  CHECK(order(ds) == std::vector<std::string>{"torch-stable-abi213-cu128-x86_64-linux",
                                              "torch-stable-abi211-cu128-x86_64-linux", "torch215-cu128-x86_64-linux",
                                              "torch215-cxx11-cu128-x86_64-linux", "torch-cuda", "torch-universal",
                                              "torch-stable-abi216-cu128-x86_64-linux x"});
}

TEST_CASE("wrong torch, ABI, cpu, os and free-threaded Python are rejected with a reason") {
  Environment env = cuda_machine();
  env.python = Version{3, 13};
  env.python_free_threaded = true;
  const auto ft = select({"torch215-cxx11-cu128-x86_64-linux", "torch-cuda"}, env);
  CHECK(ft[0].name == "torch-cuda");
  CHECK(to_string(ft[1].reason) == "arch kernel not supported on free-threaded Python <3.15");

  env = cuda_machine();
  const auto ds = select(
      {"torch214-cxx11-cu128-x86_64-linux", "torch215-cxx98-cu128-x86_64-linux", "torch215-cxx11-cu128-aarch64-linux",
       "torch215-cxx11-cu128-x86_64-windows", "torch215-cxx11-cpu-x86_64-linux", "not-a-variant"},
      env);
  for (const auto& d : ds) CHECK_FALSE(d.accepted());
  CHECK(chosen(ds) == nullptr);
  const std::string trace = format_trace(ds);
  CHECK_THAT(trace, Catch::Contains("Torch version (2.14) does not match environment Torch version (2.15)"));
  CHECK_THAT(trace, Catch::Contains("Torch CXX11 ABI (False) does not match environment Torch CXX11 ABI (True)"));
  CHECK_THAT(trace, Catch::Contains("CPU (aarch64) does not match system CPU (x86_64)"));
  CHECK_THAT(trace, Catch::Contains("OS (windows) does not match system OS (linux)"));
  CHECK_THAT(trace, Catch::Contains("backend (cpu) does not match selected backend (cu128)"));
  CHECK_THAT(trace, Catch::Contains("not-a-variant: `not-a-variant` is not a build variant name"));
}

TEST_CASE("a rejection carries what its check compared, not only a sentence") {
  const auto ds = select({"torch215-cxx11-cu129-x86_64-linux", "torch214-cxx11-cu128-x86_64-linux", "torch-rocm",
                          "torch215-cxx11-cu128-x86_64-linux"},
                         cuda_machine({12, 8}));
  REQUIRE(order(ds) == std::vector<std::string>{"torch215-cxx11-cu128-x86_64-linux", "torch-rocm x",
                                                "torch214-cxx11-cu128-x86_64-linux x",
                                                "torch215-cxx11-cu129-x86_64-linux x"});
  CHECK(ds[0].reason == Reason(reason::Compatible{}));
  CHECK(ds[1].reason == Reason(reason::NoarchBackend{BackendKind::kRocm, BackendKind::kCuda}));
  CHECK(ds[2].reason == Reason(reason::TorchVersion{{2, 14}, Version{2, 15}}));
  CHECK(ds[3].reason == Reason(reason::CudaVersion{Version{12, 9}, Version{12, 8}}));
  CHECK(reason_code(ds[3].reason) == ReasonCode::kCudaVersion);
  const auto unparsable = select({"not-a-variant"}, cuda_machine());
  CHECK(reason_code(unparsable[0].reason) == ReasonCode::kUnparsableName);
  CHECK_FALSE(unparsable[0].variant.has_value());
}

TEST_CASE("a C++ process without Python rejects pure-Python variants") {
  const auto ds = select({"torch-universal", "torch-cuda"}, cuda_machine(), {.native_only = true});
  CHECK(chosen(ds) == nullptr);
  CHECK(to_string(ds[0].reason) == "pure-Python variant; only a Python process can load it");
  CHECK(reason_code(ds[0].reason) == ReasonCode::kPurePython);
}

TEST_CASE("tvm-ffi builds need the named tvm-ffi version, and are rejected in a native-only process") {
  Environment e = cuda_machine();
  const std::vector<std::string> names{"tvm-ffi01-cu128-x86_64-linux", "torch-cuda"};
  auto ds = select(names, e);
  CHECK(order(ds) == std::vector<std::string>{"torch-cuda", "tvm-ffi01-cu128-x86_64-linux x"});
  CHECK(to_string(ds[1].reason) == "tvm-ffi version (0.1) does not match environment tvm-ffi version (None)");
  e.tvm_ffi = Version{0, 1};
  ds = select(names, e);
  CHECK(order(ds) == std::vector<std::string>{"tvm-ffi01-cu128-x86_64-linux", "torch-cuda"});
  ds = select(names, e, {.native_only = true});
  CHECK(chosen(ds) == nullptr);
  CHECK(reason_code(ds[1].reason) == ReasonCode::kTvmFfiNotLoadable);
  CHECK(Variant::parse("tvm-ffi012-cpu-x86_64-linux")->framework_version == Version{0, 12});
}

TEST_CASE("a native caller without LibTorch takes tvm-ffi builds only and says why torch builds are out") {
  Environment e = cuda_machine();
  e.tvm_ffi = Version{0, 1};
  const std::vector<std::string> names{"torch215-cxx11-cu128-x86_64-linux", "torch-stable-abi211-cu128-x86_64-linux",
                                       "tvm-ffi01-cu128-x86_64-linux", "tvm-ffi01-cpu-x86_64-linux", "torch-cuda"};
  const auto tvm_only = select(names, e, {.native_only = true, .loads_torch = false, .loads_tvm_ffi = true});
  CHECK(order(tvm_only) == std::vector<std::string>{"tvm-ffi01-cu128-x86_64-linux", "torch-cuda x",
                                                    "torch-stable-abi211-cu128-x86_64-linux x",
                                                    "torch215-cxx11-cu128-x86_64-linux x",
                                                    "tvm-ffi01-cpu-x86_64-linux x"});
  CHECK(to_string(tvm_only[3].reason) ==
        "needs LibTorch, which this process does not have; only tvm-ffi variants load here");
  CHECK(reason_code(tvm_only[2].reason) == ReasonCode::kNoLibTorch);
  // One that loads both ranks them as the kernels package does: stable ABI, torch, then tvm-ffi.
  const auto both = select(names, e, {.native_only = true, .loads_torch = true, .loads_tvm_ffi = true});
  CHECK(order(both) == std::vector<std::string>{"torch-stable-abi211-cu128-x86_64-linux",
                                                "torch215-cxx11-cu128-x86_64-linux", "tvm-ffi01-cu128-x86_64-linux",
                                                "torch-cuda x", "tvm-ffi01-cpu-x86_64-linux x"});
}

TEST_CASE("off Linux the C++ ABI is unknown, so ABI-tagged variants do not fit") {
  Environment e = cuda_machine();
  e.os = "windows";
  const auto ds = select({"torch215-cxx11-cu128-x86_64-windows", "torch215-cu128-x86_64-windows"}, e);
  CHECK(order(ds) ==
        std::vector<std::string>{"torch215-cu128-x86_64-windows", "torch215-cxx11-cu128-x86_64-windows x"});
  CHECK(to_string(ds[1].reason) == "Torch CXX11 ABI (True) does not match environment Torch CXX11 ABI (None)");
}

}  // namespace
}  // namespace kernelhub::resolver
