#include "kernelhub/resolver/internal/gpu_fit_step.hpp"

#include <map>

#include <catch2/catch.hpp>

namespace kernelhub::resolver {
namespace {

Environment machine(std::vector<ComputeCapability> gpus, Version driver = {13, 0}) {
  Environment e;
  e.os = "linux";
  e.cpu = "x86_64";
  e.torch = Version{2, 15};
  e.cxx11_abi = true;
  e.torch_backend = Backend{BackendKind::kCuda, Version{13, 0}};
  e.backend = e.torch_backend;
  e.cuda_driver = driver;
  e.gpus = std::move(gpus);
  return e;
}

// Device code per variant name, as metadata.json backend.archs would give it.
DeviceCodeLookup archs(std::map<std::string, std::vector<std::string>> by_name) {
  return [by_name = std::move(by_name)](const Decision& d) -> std::optional<std::vector<CudaTarget>> {
    const auto it = by_name.find(d.name);
    if (it == by_name.end()) return std::nullopt;
    return parse_cuda_archs(it->second).value();
  };
}

std::vector<std::string> order(const std::vector<Decision>& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds) out.push_back(d.name + (d.accepted() ? "" : " x"));
  return out;
}

const std::string kStable = "torch-stable-abi211-cu130-x86_64-linux";
const std::string kArch = "torch215-cxx11-cu130-x86_64-linux";

TEST_CASE("a CUDA variant without code for the GPU is rejected with the fit reason") {
  auto ds = select({kStable, kArch}, machine({{12, 0}}));
  REQUIRE(ds.front().name == kStable);
  apply_gpu_fit(ds, machine({{12, 0}}), archs({{kStable, {"8.0", "9.0"}}, {kArch, {"8.0", "9.0", "12.0"}}}));
  CHECK(order(ds) == std::vector<std::string>{kArch, kStable + " x"});
  CHECK(to_string(ds[1].reason) == "built for sm_80, sm_90; this GPU is sm_120 and no PTX is included");
  CHECK(to_string(ds[0].reason) == "compatible (sm_120 SASS)");
  // The values behind the sentences: the fit, for the rejected and the accepted one.
  CHECK(reason_code(ds[1].reason) == ReasonCode::kNoCodeForGpu);
  CHECK(std::get<reason::GpuMismatch>(ds[1].reason).fit.gpus.at(0).gpu == ComputeCapability{12, 0});
  REQUIRE(std::get<reason::Compatible>(ds[0].reason).fit.has_value());
  CHECK(std::get<reason::Compatible>(ds[0].reason).fit->kind == GpuFitKind::kExactSass);
}

TEST_CASE("among runnable variants exact SASS is preferred over PTX JIT, select()'s order otherwise") {
  auto ds = select({kStable, kArch}, machine({{12, 0}}));
  apply_gpu_fit(ds, machine({{12, 0}}), archs({{kStable, {"9.0+PTX"}}, {kArch, {"12.0"}}}));
  CHECK(order(ds) == std::vector<std::string>{kArch, kStable});
  CHECK(to_string(ds[1].reason) == "compatible (JIT from compute_90 PTX for sm_120, compiled at first load)");

  auto same = select({kStable, kArch}, machine({{12, 0}}));
  apply_gpu_fit(same, machine({{12, 0}}), archs({{kStable, {"12.0"}}, {kArch, {"12.0"}}}));
  CHECK(order(same) == std::vector<std::string>{kStable, kArch});
}

TEST_CASE("variants with unknown code, non-CUDA variants and rejected ones are left as select() decided") {
  const std::vector<std::string> names{kStable, kArch, "torch215-cxx11-cpu-x86_64-linux",
                                       "torch215-cxx11-cu140-x86_64-linux"};
  const auto before = select(names, machine({{9, 0}}));
  auto after = before;
  apply_gpu_fit(after, machine({{9, 0}}), archs({}));
  REQUIRE(after.size() == before.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    CHECK(after[i].name == before[i].name);
    CHECK(after[i].accepted() == before[i].accepted());
    CHECK(after[i].reason == before[i].reason);
  }
}

TEST_CASE("the variant's CUDA major is checked against the driver") {
  auto ds = select({kArch}, machine({{9, 0}}, {12, 8}));
  // select() itself compares against torch's CUDA, not the driver: fit adds the driver check.
  REQUIRE(ds.front().accepted());
  apply_gpu_fit(ds, machine({{9, 0}}, {12, 8}), archs({{kArch, {"9.0"}}}));
  CHECK_FALSE(ds.front().accepted());
  CHECK_THAT(to_string(ds.front().reason), Catch::StartsWith("built with CUDA 13.0; this driver supports CUDA 12.8"));
  CHECK(reason_code(ds.front().reason) == ReasonCode::kDriverTooOld);
}

}  // namespace
}  // namespace kernelhub::resolver
