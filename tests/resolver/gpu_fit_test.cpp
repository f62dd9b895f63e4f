#include "kernelhub/resolver/gpu_fit.hpp"

#include <catch2/catch.hpp>

#include "cuda_targets.hpp"
#include "kernelhub/resolver/reason.hpp"

namespace kernelhub::resolver {
namespace {

using testing::targets;

CudaTarget ptx_with_isa(const char* name, Version isa) {
  auto t = CudaTarget::parse(name).value();
  t.ptx_isa = isa;
  return t;
}

GpuFit fit(std::vector<CudaTarget> code, std::vector<ComputeCapability> gpus, std::optional<Version> driver = Version{13, 0},
           std::optional<Version> toolkit = Version{13, 0}) {
  return fit_gpus(GpuFitInput{std::move(code), std::move(gpus), driver, toolkit});
}

TEST_CASE("SASS runs on the same major with an equal or lower minor") {
  CHECK(fit(targets({"sm_80", "sm_90"}), {{9, 0}}).kind == GpuFitKind::kExactSass);
  CHECK(fit(targets({"sm_80", "sm_90"}), {{8, 0}}).kind == GpuFitKind::kExactSass);
  const auto on_86 = fit(targets({"sm_80", "sm_90"}), {{8, 6}});
  CHECK(on_86.kind == GpuFitKind::kCompatibleSass);
  CHECK(on_86.gpus.at(0).used->to_string() == "sm_80");
  CHECK(to_string(on_86) == "sm_80 SASS runs on sm_86");
  // The highest lower minor wins.
  CHECK(fit(targets({"sm_80", "sm_86"}), {{8, 9}}).gpus.at(0).used->to_string() == "sm_86");
  // Exact beats lower minor.
  CHECK(fit(targets({"sm_80", "sm_86"}), {{8, 6}}).kind == GpuFitKind::kExactSass);
  // Never across majors.
  CHECK(fit(targets({"sm_80"}), {{9, 0}}).kind == GpuFitKind::kNoCodeForGpu);
  CHECK(fit(targets({"sm_90"}), {{8, 9}}).kind == GpuFitKind::kNoCodeForGpu);
  CHECK(fit(targets({"sm_100"}), {{10, 3}}).kind == GpuFitKind::kCompatibleSass);
  CHECK(fit(targets({"sm_100"}), {{12, 0}}).kind == GpuFitKind::kNoCodeForGpu);
}

TEST_CASE("the rejection names what the binary has and what the GPU is") {
  const auto r = fit(targets({"sm_80", "sm_90", "sm_80"}), {{12, 0}});
  CHECK_FALSE(r.runs());
  CHECK(r.kind == GpuFitKind::kNoCodeForGpu);
  CHECK(to_string(r) == "built for sm_80, sm_90; this GPU is sm_120 and no PTX is included");
  const auto newer_ptx = fit(targets({"sm_90", "compute_90"}), {{8, 6}});
  CHECK(to_string(newer_ptx) ==
        "built for sm_90, compute_90; this GPU is sm_86 and no included PTX can be compiled for it "
        "(compute_90 needs sm_90 or newer)");
}

TEST_CASE("an `a` target runs only on exactly its compute capability") {
  CHECK(fit(targets({"sm_90a"}), {{9, 0}}).kind == GpuFitKind::kExactSass);
  const auto r = fit(targets({"sm_90a"}), {{10, 0}});
  CHECK(r.kind == GpuFitKind::kNoCodeForGpu);
  CHECK(fit(targets({"sm_100a"}), {{10, 3}}).kind == GpuFitKind::kNoCodeForGpu);
  CHECK_THAT(to_string(fit(targets({"sm_100a"}), {{10, 3}})), Catch::EndsWith("; sm_100a runs only on sm_100"));
  // `a` PTX is no escape either.
  CHECK(fit(targets({"compute_90a"}), {{10, 0}}).kind == GpuFitKind::kNoCodeForGpu);
  CHECK_THAT(to_string(fit(targets({"compute_90a"}), {{10, 0}})), Catch::Contains("compute_90a runs only on sm_90"));
  CHECK(fit(targets({"compute_90a"}), {{9, 0}}).kind == GpuFitKind::kPtxJit);
  // Mixed: sm_90a for Hopper plus plain PTX for everything newer.
  CHECK(fit(targets({"sm_90a", "compute_90"}), {{12, 0}}).kind == GpuFitKind::kPtxJit);
}

TEST_CASE("an `f` target runs within its family only") {
  CHECK(fit(targets({"sm_100f"}), {{10, 0}}).kind == GpuFitKind::kExactSass);
  CHECK(fit(targets({"sm_100f"}), {{10, 3}}).kind == GpuFitKind::kCompatibleSass);
  CHECK(fit(targets({"sm_100f"}), {{12, 0}}).kind == GpuFitKind::kNoCodeForGpu);
  CHECK(fit(targets({"compute_100f"}), {{10, 3}}).kind == GpuFitKind::kPtxJit);
  CHECK(fit(targets({"compute_100f"}), {{12, 0}}).kind == GpuFitKind::kNoCodeForGpu);
  CHECK(fit(targets({"compute_103f"}), {{10, 0}}).kind == GpuFitKind::kNoCodeForGpu);
}

TEST_CASE("integrated (Tegra) GPUs share SASS with no other compute capability") {
  CHECK(fit(targets({"sm_80"}), {{8, 7}}).kind == GpuFitKind::kNoCodeForGpu);
  CHECK_THAT(to_string(fit(targets({"sm_80"}), {{8, 7}})), Catch::Contains("integrated (Tegra)"));
  CHECK(fit(targets({"sm_87"}), {{8, 7}}).kind == GpuFitKind::kExactSass);
  CHECK(fit(targets({"sm_87"}), {{8, 9}}).kind == GpuFitKind::kNoCodeForGpu);
  CHECK(fit(targets({"sm_72"}), {{7, 5}}).kind == GpuFitKind::kNoCodeForGpu);
  // PTX still JIT-compiles across.
  CHECK(fit(targets({"compute_80"}), {{8, 7}}).kind == GpuFitKind::kPtxJit);
}

TEST_CASE("PTX for an older or equal arch is JIT-compiled when the driver reads its ISA") {
  const auto r = fit(targets({"sm_80", "sm_90", "compute_90"}), {{12, 0}});
  CHECK(r.kind == GpuFitKind::kPtxJit);
  CHECK(r.gpus.at(0).used->to_string() == "compute_90");
  CHECK(to_string(r) == "JIT from compute_90 PTX for sm_120, compiled at first load");
  // The newest PTX the GPU takes is used.
  CHECK(fit(targets({"compute_80", "compute_90", "compute_120"}), {{10, 0}}).gpus.at(0).used->to_string() ==
        "compute_90");
  // SASS is preferred to PTX of the same arch.
  CHECK(fit(targets({"sm_90", "compute_90"}), {{9, 0}}).kind == GpuFitKind::kExactSass);
  CHECK(fit(targets({"sm_80", "compute_90"}), {{8, 6}}).kind == GpuFitKind::kCompatibleSass);
}

TEST_CASE("PTX newer than the driver can read is not JIT-compiled") {
  // ISA known from the bytes: PTX 9.0 needs CUDA 13.0, whatever the variant's toolkit says.
  const auto r = fit({CudaTarget::parse("sm_80").value(), ptx_with_isa("compute_90", {9, 0})}, {{12, 0}},
                     Version{12, 8}, Version{12, 8});
  CHECK(r.kind == GpuFitKind::kPtxNeedsNewerDriver);
  CHECK(to_string(r) ==
        "built for sm_80, compute_90; this GPU is sm_120 and only compute_90 (PTX ISA 9.0) fits it, which needs a "
        "driver for CUDA 13.0 or newer to JIT-compile; this driver supports CUDA 12.8");
  CHECK(fit({ptx_with_isa("compute_90", {8, 7})}, {{12, 0}}, Version{12, 8}, Version{12, 8}).kind == GpuFitKind::kPtxJit);
  CHECK(fit({ptx_with_isa("compute_90", {8, 8})}, {{12, 0}}, Version{12, 8}, Version{12, 9}).kind ==
        GpuFitKind::kPtxNeedsNewerDriver);
  // ISA unknown (metadata): the variant's CUDA version stands in. Minor-version compatibility
  // runs a cu129 SASS build on a 12.8 driver, but not its PTX.
  CHECK(fit(targets({"sm_90"}), {{9, 0}}, Version{12, 8}, Version{12, 9}).kind == GpuFitKind::kExactSass);
  const auto approx = fit(targets({"compute_90"}), {{12, 0}}, Version{12, 8}, Version{12, 9});
  CHECK(approx.kind == GpuFitKind::kPtxNeedsNewerDriver);
  CHECK_THAT(to_string(approx), Catch::Contains("compute_90 (built with CUDA 12.9)"));
  CHECK(fit(targets({"compute_90"}), {{12, 0}}, Version{12, 9}, Version{12, 9}).kind == GpuFitKind::kPtxJit);
  // A usable PTX beats a blocked newer one.
  CHECK(fit({ptx_with_isa("compute_80", {8, 0}), ptx_with_isa("compute_90", {9, 0})}, {{12, 0}}, Version{12, 8},
            Version{12, 8})
            .gpus.at(0)
            .used->to_string() == "compute_80");
}

TEST_CASE("the driver's CUDA major must reach the variant's") {
  const auto r = fit(targets({"sm_90"}), {{9, 0}}, Version{12, 9}, Version{13, 0});
  CHECK(r.kind == GpuFitKind::kDriverTooOld);
  CHECK(to_string(r) ==
        "built with CUDA 13.0; this driver supports CUDA 12.9 and runs CUDA 12.x builds at most "
        "(CUDA 13.x needs driver 580 or newer)");
  CHECK(r.gpus.size() == 1);
  // Minor-version compatibility: any driver of the same major.
  CHECK(fit(targets({"sm_90"}), {{9, 0}}, Version{13, 0}, Version{13, 2}).kind == GpuFitKind::kExactSass);
  CHECK(fit(targets({"sm_90"}), {{9, 0}}, Version{13, 2}, Version{12, 6}).kind == GpuFitKind::kExactSass);
  // Host-only CUDA code is still bound by the driver.
  CHECK(fit({}, {{9, 0}}, Version{11, 8}, Version{12, 0}).kind == GpuFitKind::kDriverTooOld);
}

TEST_CASE("unknowns do not reject") {
  CHECK(fit(targets({"sm_80"}), {}).kind == GpuFitKind::kNotChecked);
  CHECK(fit(targets({"sm_80"}), {}).runs());
  CHECK(fit({}, {{9, 0}}).kind == GpuFitKind::kNotChecked);
  CHECK(fit(targets({"compute_90"}), {{12, 0}}, std::nullopt, std::nullopt).kind == GpuFitKind::kPtxJit);
  CHECK_THAT(to_string(fit(targets({"compute_90"}), {{12, 0}}, std::nullopt, std::nullopt)),
             Catch::Contains("driver version unknown"));
  CHECK(fit(targets({"sm_90"}), {{9, 0}}, std::nullopt, Version{13, 0}).kind == GpuFitKind::kExactSass);
}

TEST_CASE("every visible GPU must be able to run the binary") {
  const auto both = fit(targets({"sm_80", "sm_90"}), {{9, 0}, {8, 6}});
  CHECK(both.kind == GpuFitKind::kCompatibleSass);
  CHECK(to_string(both) == "GPU 0: sm_90 SASS; GPU 1: sm_80 SASS runs on sm_86");
  const auto one_fails = fit(targets({"sm_80", "sm_90"}), {{9, 0}, {12, 0}});
  CHECK_FALSE(one_fails.runs());
  CHECK(to_string(one_fails) == "GPU 1: built for sm_80, sm_90; this GPU is sm_120 and no PTX is included");
  CHECK(one_fails.gpus.at(0).kind == GpuFitKind::kExactSass);
}

TEST_CASE("fit kinds order exact SASS before lower-minor SASS before PTX JIT") {
  CHECK(GpuFitKind::kExactSass < GpuFitKind::kCompatibleSass);
  CHECK(GpuFitKind::kCompatibleSass < GpuFitKind::kPtxJit);
  CHECK(runs(GpuFitKind::kPtxJit));
  CHECK_FALSE(runs(GpuFitKind::kPtxNeedsNewerDriver));
}

TEST_CASE("archs from metadata.json decide before download") {
  const auto code = parse_cuda_archs({"7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0+PTX"}).value();
  CHECK(fit(code, {{12, 1}}).kind == GpuFitKind::kCompatibleSass);
  CHECK(fit(code, {{11, 0}}).kind == GpuFitKind::kNoCodeForGpu);
  CHECK(fit(code, {{10, 3}}).kind == GpuFitKind::kCompatibleSass);
}

TEST_CASE("PTX ISA versions map to the first CUDA release that reads them") {
  CHECK(min_cuda_for_ptx_isa({8, 0}) == Version{12, 0});
  CHECK(min_cuda_for_ptx_isa({8, 5}) == Version{12, 5});
  CHECK(min_cuda_for_ptx_isa({8, 6}) == Version{12, 7});
  CHECK(min_cuda_for_ptx_isa({8, 8}) == Version{12, 9});
  CHECK(min_cuda_for_ptx_isa({9, 0}) == Version{13, 0});
  CHECK(min_cuda_for_ptx_isa({9, 5}) == Version{13, 5});
  CHECK(min_cuda_for_ptx_isa({7, 8}) == Version{11, 8});
  CHECK(min_cuda_for_ptx_isa({8, 9}) == Version{13, 0});
  CHECK_FALSE(min_cuda_for_ptx_isa({5, 0}).has_value());
}

}  // namespace
}  // namespace kernelhub::resolver
