#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "kernelhub/binary_format/internal/op_schema_text.hpp"
#include "kernelhub/internal/load.hpp"
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

TEST_CASE("the API files written at build time describe the kernel that loads") {
  const auto kernel = load_local(KERNELHUB_KERNELS_DIR, cpu_env(), map_environment({})).value();
  const auto read_json = [&](const char* name) {
    std::ifstream in(kernel.path() / name);
    REQUIRE(in);
    return nlohmann::json::parse(in);
  };
  // op_schemas.json: each op the library registers, its schema as the loader prints it, and the
  // C++ signature describe-api derives from that text is the one c10's schema gives.
  const auto written = read_json("op_schemas.json");
  CHECK(written["namespace"] == kernel.ns());
  std::map<std::string, std::string> schemas;
  for (const auto& op : written["ops"]) schemas[op["name"].get<std::string>()] = op["schema"].get<std::string>();
  REQUIRE(schemas.size() == kernel.ops().size());
  for (const auto& op : kernel.ops()) {
    INFO(op.name);
    REQUIRE(schemas.contains(op.name));
    CHECK(kernel.ns() + "::" + schemas.at(op.name) == op.schema);
    const auto handle = c10::Dispatcher::singleton().findSchema({kernel.ns() + "::" + op.name, ""});
    REQUIRE(handle.has_value());
    CHECK(binary_format::cpp_signature_for(binary_format::parse_op_schema(schemas.at(op.name)).value()) ==
          cpp_signature_for(handle->schema()));
  }
  // symbols.json, kernel-builder's: the functions of __all__ and the layers of layers.__all__.
  const auto symbols = read_json("symbols.json");
  CHECK(symbols["schema_version"] == 1);
  CHECK(symbols["module"] == kernel.ns());
  std::vector<std::string> functions;
  for (const auto& f : symbols["functions"]) functions.push_back(f["name"].get<std::string>());
  CHECK(std::find(functions.begin(), functions.end(), "rms_norm") != functions.end());
  const auto& rms_norm = *std::find_if(symbols["functions"].begin(), symbols["functions"].end(),
                                       [](const nlohmann::json& f) { return f["name"] == "rms_norm"; });
  CHECK(rms_norm["kind"] == "function");
  CHECK(rms_norm["signature"]["parameters"][2]["default"] == "1e-06");
  bool has_layer = false;
  for (const auto& layer : symbols["layers"]) {
    has_layer = has_layer || layer["name"] == "RMSNorm";
    CHECK(layer["attributes"].contains("has_backward"));
  }
  CHECK(has_layer);
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
  SECTION("only a build for another torch: the error leads with it, and what would make it run") {
    const auto root = fresh_dir("other-torch");
    const auto here = cpu_env();
    resolver::Variant other = *here.native_variant();
    other.framework_version.minor += 1;
    std::filesystem::create_directories(root / "build" / other.to_string());
    const auto r = load_local(root, here, env);
    REQUIRE(r.error().code == ErrorCode::kNoCompatibleVariant);
    const std::string wanted = other.framework_version.to_string();
    CHECK_THAT(
        r.error().message,
        Catch::StartsWith("no variant of `" + root.string() + "` runs here: the closest is `" + other.to_string() +
                          "`, which needs torch " + wanted + " (here: torch " + here.torch->to_string() +
                          "); install torch " + wanted + ", or ask the publisher for a `" +
                          here.native_variant()->to_string() + "` build\n\n" + other.to_string() + ": "));
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
