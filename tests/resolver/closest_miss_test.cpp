#include "kernelhub/resolver/internal/closest_miss.hpp"

#include <catch2/catch.hpp>

namespace kernelhub::resolver {
namespace {

// A CUDA 12.8 torch 2.11 on x86_64 Linux, in a Python process.
Environment machine() {
  Environment e;
  e.os = "linux";
  e.cpu = "x86_64";
  e.torch = Version{2, 11};
  e.cxx11_abi = true;
  e.torch_backend = Backend{BackendKind::kCuda, Version{12, 8}};
  e.backend = e.torch_backend;
  e.python = Version{3, 12};
  return e;
}

std::optional<ClosestMiss> closest(const std::vector<std::string>& names, const Environment& env = machine(),
                                   const Loadable& loadable = Loadable::python_process()) {
  return closest_miss(select(names, env, loadable), env, loadable);
}

std::vector<ReasonCode> codes(const ClosestMiss& miss) {
  std::vector<ReasonCode> out;
  for (const auto& r : miss.blocking) out.push_back(reason_code(r));
  return out;
}

TEST_CASE("another torch alone: the closest names it, with the torch to install and the build to ask for") {
  const auto miss = closest({"torch215-cxx11-cu128-x86_64-linux"});
  REQUIRE(miss);
  CHECK(miss->name == "torch215-cxx11-cu128-x86_64-linux");
  CHECK(codes(*miss) == std::vector{ReasonCode::kTorchVersion});
  REQUIRE(miss->for_here);
  CHECK(miss->for_here->to_string() == "torch211-cxx11-cu128-x86_64-linux");
  CHECK(to_string(*miss) ==
        "the closest is `torch215-cxx11-cu128-x86_64-linux`, which needs torch 2.15 (here: torch 2.11); install "
        "torch 2.15, or ask the publisher for a `torch211-cxx11-cu128-x86_64-linux` build");
}

TEST_CASE("the build for here keeps the variant's own name form") {
  const auto miss = closest({"torch-2.15-cxx11-cuda-12.8-cpython-3.9-abi3-x86_64-linux"});
  REQUIRE(miss);
  REQUIRE(miss->for_here);
  CHECK(miss->for_here->to_string() == "torch-2.11-cxx11-cuda-12.8-cpython-3.9-abi3-x86_64-linux");
}

TEST_CASE("one change beats another of a lower rank: a torch version before a CUDA version") {
  // Both need one package change; the torch version ranks first, wherever it is in the trace.
  for (const auto& names :
       {std::vector<std::string>{"torch211-cxx11-cu129-x86_64-linux", "torch212-cxx11-cu128-x86_64-linux"},
        std::vector<std::string>{"torch212-cxx11-cu128-x86_64-linux", "torch211-cxx11-cu129-x86_64-linux"}}) {
    const auto miss = closest(names);
    REQUIRE(miss);
    CHECK(miss->name == "torch212-cxx11-cu128-x86_64-linux");
  }
  const auto cuda = closest({"torch211-cxx11-cu129-x86_64-linux"});
  REQUIRE(cuda);
  CHECK(to_string(*cuda) ==
        "the closest is `torch211-cxx11-cu129-x86_64-linux`, which needs a torch built for CUDA 12.9 or a newer 12.x "
        "(here: CUDA 12.8); install a torch built for CUDA 12.9 or a newer 12.x, or ask the publisher for a "
        "`torch211-cxx11-cu128-x86_64-linux` build");
}

TEST_CASE("every blocking check is found: one change beats two of the same kind") {
  const auto miss = closest({"torch215-cxx11-cu130-x86_64-linux", "torch215-cxx11-cu126-x86_64-linux"});
  REQUIRE(miss);
  CHECK(miss->name == "torch215-cxx11-cu126-x86_64-linux");
  CHECK(codes(*miss) == std::vector{ReasonCode::kTorchVersion});
  const auto two = closest({"torch215-cxx11-cu130-x86_64-linux"});
  REQUIRE(two);
  CHECK(codes(*two) == std::vector{ReasonCode::kTorchVersion, ReasonCode::kCudaVersion});
  CHECK(to_string(*two) ==
        "the closest is `torch215-cxx11-cu130-x86_64-linux`, which needs torch 2.15 (here: torch 2.11) and a torch "
        "built for CUDA 13.0 or a newer 13.x (here: CUDA 12.8); install torch 2.15 and install a torch built for CUDA "
        "13.0 or a newer 13.x, or ask the publisher for a `torch211-cxx11-cu128-x86_64-linux` build");
}

TEST_CASE("two package changes beat one change only the publisher can make") {
  // The aarch64 build needs only another machine, but that is no change a user makes here.
  const auto miss = closest({"torch211-cxx11-cu128-aarch64-linux", "torch215-cxx11-cu130-x86_64-linux"});
  REQUIRE(miss);
  CHECK(miss->name == "torch215-cxx11-cu130-x86_64-linux");
  const auto foreign = closest({"torch29-cxx11-cu126-aarch64-linux"});
  REQUIRE(foreign);
  // CUDA 12.6 runs on a CUDA 12.8 torch: only the CPU and the torch block it.
  CHECK(codes(*foreign) == std::vector{ReasonCode::kCpu, ReasonCode::kTorchVersion});
  // No user action lifts a CPU mismatch: only the publisher's build is offered.
  CHECK(to_string(*foreign) ==
        "the closest is `torch29-cxx11-cu126-aarch64-linux`, which needs CPU aarch64 (here: x86_64) and torch 2.9 "
        "(here: torch 2.11); ask the publisher for a `torch211-cxx11-cu126-x86_64-linux` build");
}

TEST_CASE("on a tie the trace's order decides") {
  const std::vector<std::string> names{"torch216-cxx11-cu128-x86_64-linux", "torch214-cxx11-cu128-x86_64-linux"};
  const auto decisions = select(names, machine());
  const auto miss = closest_miss(decisions, machine(), Loadable::python_process());
  REQUIRE(miss);
  CHECK(miss->name == decisions.front().name);
  CHECK(closest({names[1], names[0]})->name == miss->name);  // not the order listed
}

TEST_CASE("none when a variant runs here, or when no name parses") {
  CHECK_FALSE(closest({"torch211-cxx11-cu128-x86_64-linux", "torch215-cxx11-cu128-x86_64-linux"}));
  CHECK_FALSE(closest({"not-a-variant", "torch"}));
  CHECK_FALSE(closest({}));
  const auto decisions = select({"not-a-variant"}, machine());
  CHECK(no_variant_message("`acme/x`", decisions, machine(), Loadable::python_process()) ==
        "no variant of `acme/x` runs here\n\n" + format_trace(decisions));
}

TEST_CASE("the message leads with the closest miss, then the whole trace") {
  const auto decisions = select({"torch215-cxx11-cu128-x86_64-linux", "torch211-cxx11-cu128-aarch64-linux"}, machine());
  const std::string message =
      no_variant_message("`acme/norm` (revision: v1)", decisions, machine(), Loadable::python_process());
  CHECK(message ==
        "no variant of `acme/norm` (revision: v1) runs here: the closest is `torch215-cxx11-cu128-x86_64-linux`, which "
        "needs torch 2.15 (here: torch 2.11); install torch 2.15, or ask the publisher for a "
        "`torch211-cxx11-cu128-x86_64-linux` build\n\n" +
            format_trace(decisions));
}

TEST_CASE("a process that cannot load the kind: the change is the process, and no build is asked for") {
  const auto miss = closest({"torch211-cxx11-cu128-x86_64-linux"}, machine(), Loadable::torch_free_process());
  REQUIRE(miss);
  CHECK(codes(*miss) == std::vector{ReasonCode::kNoLibTorch});
  CHECK_FALSE(miss->for_here);
  CHECK(to_string(*miss) ==
        "the closest is `torch211-cxx11-cu128-x86_64-linux`, which needs LibTorch (here: a process without it); load "
        "it where LibTorch is (kernelhub-get, the C++ API, or Python with torch)");
}

TEST_CASE("a stable-ABI build for a newer torch, another tvm-ffi, another Python") {
  Environment env = machine();
  env.tvm_ffi = Version{0, 2};
  const auto stable = closest({"torch-stable-abi213-cu128-x86_64-linux"}, env);
  REQUIRE(stable);
  CHECK(to_string(*stable) ==
        "the closest is `torch-stable-abi213-cu128-x86_64-linux`, which needs torch 2.13 or newer (here: torch 2.11); "
        "install torch 2.13 or newer, or ask the publisher for a `torch-stable-abi211-cu128-x86_64-linux` build");
  const auto tvm = closest({"tvm-ffi01-cu128-x86_64-linux"}, env);
  REQUIRE(tvm);
  CHECK(codes(*tvm) == std::vector{ReasonCode::kTvmFfiVersion});
  CHECK(tvm->for_here->to_string() == "tvm-ffi02-cu128-x86_64-linux");
  const auto python = closest({"torch-2.11-cxx11-cuda-12.8-cpython-3.13-abi3-x86_64-linux"}, env);
  REQUIRE(python);
  CHECK(to_string(*python) ==
        "the closest is `torch-2.11-cxx11-cuda-12.8-cpython-3.13-abi3-x86_64-linux`, which needs Python 3.13 or newer "
        "(here: Python 3.12); run it with Python 3.13 or newer, or ask the publisher for a "
        "`torch-2.11-cxx11-cuda-12.8-cpython-3.12-abi3-x86_64-linux` build");
}

TEST_CASE("a GPU rejection: the driver is the user's to update; code for the GPU is the publisher's") {
  const auto decided = [](GpuFitKind kind) {
    auto decisions = select({"torch211-cxx11-cu128-x86_64-linux"}, machine());
    GpuFit fit;
    fit.kind = kind;
    fit.input.code = {};
    fit.input.gpus = {ComputeCapability{8, 0}};
    fit.input.driver = Version{11, 8};
    fit.input.toolkit = Version{12, 8};
    fit.gpus = {GpuFitOnGpu{.gpu = {8, 0}, .kind = kind}};
    decisions.front().reason = reason::GpuMismatch{fit};
    return decisions;
  };
  const auto driver = closest_miss(decided(GpuFitKind::kDriverTooOld), machine(), Loadable::python_process());
  REQUIRE(driver);
  CHECK(codes(*driver) == std::vector{ReasonCode::kDriverTooOld});
  CHECK_FALSE(driver->for_here);
  CHECK_THAT(to_string(*driver), Catch::StartsWith("the closest is `torch211-cxx11-cu128-x86_64-linux`, which needs "
                                                   "a driver for CUDA 12.x (here: built with CUDA 12.8; this driver") &&
                                     Catch::EndsWith("; update the NVIDIA driver"));
  const auto code = closest_miss(decided(GpuFitKind::kNoCodeForGpu), machine(), Loadable::python_process());
  REQUIRE(code);
  CHECK_THAT(to_string(*code), Catch::StartsWith("the closest is `torch211-cxx11-cu128-x86_64-linux`, which needs "
                                                 "code for this GPU (here: ") &&
                                   Catch::EndsWith("; ask the publisher for a build with code for this GPU"));
  // A torch version (a package) is closer than a driver (the machine).
  auto both = decided(GpuFitKind::kDriverTooOld);
  const auto other_torch = select({"torch215-cxx11-cu128-x86_64-linux"}, machine());
  both.push_back(other_torch.front());
  CHECK(closest_miss(both, machine(), Loadable::python_process())->name == "torch215-cxx11-cu128-x86_64-linux");
}

TEST_CASE("change classes and ranks follow the header's order") {
  CHECK(change_for(ReasonCode::kTorchVersion) == Change::kPackage);
  CHECK(change_for(ReasonCode::kPythonTooOld) == Change::kProcess);
  CHECK(change_for(ReasonCode::kDriverTooOld) == Change::kMachine);
  CHECK(change_for(ReasonCode::kCpu) == Change::kPublisher);
  CHECK(change_rank(ReasonCode::kTorchVersion) < change_rank(ReasonCode::kCudaVersion));
  CHECK(change_rank(ReasonCode::kCudaVersion) < change_rank(ReasonCode::kBackend));
  CHECK(change_rank(ReasonCode::kBackend) < change_rank(ReasonCode::kCpu));
}

}  // namespace
}  // namespace kernelhub::resolver
