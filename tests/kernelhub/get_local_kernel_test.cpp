#include <torch/torch.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "kernelhub/load.hpp"
#include "load_local.hpp"

namespace kernelhub {
namespace {

resolver::Environment cpu_env() {
  return detect_environment(map_environment({{"KERNELHUB_BACKEND", "cpu"}, {"KERNELHUB_GPUS", ""}})).value();
}

std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("kh_glk_" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// A copy of the built CPU variant under `root/build/`, to damage in tests.
std::filesystem::path copy_variant(const std::filesystem::path& root) {
  const auto env = cpu_env();
  const std::string variant = env.native_variant()->to_string();
  std::filesystem::create_directories(root / "build");
  std::filesystem::copy(std::filesystem::path(KERNELHUB_KERNELS_DIR) / "build" / variant, root / "build" / variant,
                        std::filesystem::copy_options::recursive);
  return root / "build" / variant;
}

TEST_CASE("the reference kernel loads from its build directory and rms_norm matches float64") {
  const auto kernel = load_local(KERNELHUB_KERNELS_DIR, cpu_env(), map_environment({})).value();
  CHECK(kernel.variant() == cpu_env().native_variant()->to_string());
  CHECK(kernel.ns().starts_with("_reference_kernels_cpu_"));
  CHECK(kernel.metadata().name == "reference-kernels");
  REQUIRE_FALSE(kernel.decisions().empty());
  CHECK(kernel.decisions().front().accepted());

  auto rms_norm = kernel.op<void(at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, double)>("rms_norm");
  for (int64_t hidden : {1, 7, 127, 4097}) {
    for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
      INFO("hidden " << hidden << " dtype " << dtype);
      const auto x = torch::randn({5, hidden}).to(dtype);
      const auto w = torch::randn({hidden}).to(dtype);
      auto out = torch::full_like(x, std::numeric_limits<float>::quiet_NaN());
      rms_norm.call(out, x, w, 1e-6);
      const auto x64 = x.to(torch::kFloat64);
      const auto ref = x64 * torch::rsqrt(x64.pow(2).mean(-1, true) + 1e-6) * w.to(torch::kFloat64);
      const double rel = ((out.to(torch::kFloat64) - ref).norm() / ref.norm()).item<double>();
      CHECK(rel < (dtype == torch::kFloat32 ? 1e-5 : 1e-2));
      CHECK_FALSE(out.isnan().any().item<bool>());
    }
  }
  // The boxed call path gives the same result.
  const auto x = torch::randn({2, 8});
  auto a = torch::empty_like(x);
  auto b = torch::empty_like(x);
  rms_norm.call(a, x, std::nullopt, 1e-6);
  kernel.call("rms_norm", b, x, c10::IValue(), 1e-6);
  CHECK(torch::equal(a, b));
}

TEST_CASE("bad local kernels give typed errors and load nothing") {
  const auto env = map_environment({});
  SECTION("a missing path") {
    const auto r = load_local("/nonexistent/kernel", cpu_env(), env);
    CHECK(r.error().code == ErrorCode::kNotFound);
  }
  SECTION("a directory without variants") {
    const auto r = load_local(fresh_dir("empty"), cpu_env(), env);
    CHECK(r.error().code == ErrorCode::kNotFound);
    CHECK_THAT(r.error().message, Catch::Contains("Could not find kernel"));
  }
  SECTION("only variants for other machines: the trace says why each was rejected") {
    const auto root = fresh_dir("foreign");
    std::filesystem::create_directories(root / "build" / "torch29-cxx11-cu126-aarch64-linux");
    const auto r = load_local(root, cpu_env(), env);
    CHECK(r.error().code == ErrorCode::kNoCompatibleVariant);
    CHECK_THAT(r.error().message, Catch::Contains("torch29-cxx11-cu126-aarch64-linux: "));
  }
  SECTION("a tampered file fails the digest") {
    const auto variant = copy_variant(fresh_dir("tampered"));
    std::ofstream(variant / "__init__.py", std::ios::app) << "\nimport os\n";
    const auto r = load_local(variant.parent_path().parent_path(), cpu_env(), env);
    CHECK(r.error().code == ErrorCode::kIntegrityMismatch);
    CHECK_THAT(r.error().message, Catch::Contains("`__init__.py` has sha256"));
  }
  SECTION("a .so that is not ELF (with a matching digest) is refused before dlopen") {
    const auto variant = copy_variant(fresh_dir("notelf"));
    const auto metadata = Metadata::read(variant).value();
    std::ofstream(variant / (metadata.id + ".abi3.so"), std::ios::trunc) << "this is not a library";
    std::filesystem::remove(variant / "metadata.json");  // falls back to _ops.py for the namespace
    const auto r = load_local(variant.parent_path().parent_path(), cpu_env(), env);
    CHECK(r.error().code == ErrorCode::kCorruptFile);
    CHECK_THAT(r.error().message, Catch::Contains("ELF magic"));
  }
}

}  // namespace
}  // namespace kernelhub
