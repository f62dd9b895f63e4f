// Kernels built the way kernel-builder builds them (tests/fixtures/kernel_builder): linked against
// the `torch` target (libtorch.so, libtorch_cuda.so, libc10_cuda.so, libcudart from the pip torch),
// -z now, no RUNPATH. This process links only libc10 and libtorch_cpu and has no Python and no
// LD_LIBRARY_PATH for torch: get_kernel must provide the rest as `import torch` would. Both the
// classic (TORCH_LIBRARY) and the stable-ABI (STABLE_TORCH_LIBRARY, boxed) flavour load and run,
// and typed handles are checked against the schema for both kinds of op.
#include <dlfcn.h>
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <limits>

#include "kernelhub/internal/load.hpp"
#include "kernelhub/loader/internal/python_stub.hpp"
#include "load_local.hpp"

namespace kernelhub {
namespace {

resolver::Environment cpu_env() {
  return detect_environment(map_environment({{"KERNELHUB_BACKEND", "cpu"}, {"KERNELHUB_GPUS", ""}})).value();
}

std::filesystem::path fixture(const std::string& kernel) {
  return std::filesystem::path(KERNELHUB_KB_FIXTURES_DIR) / kernel;
}

Kernel load(const std::string& kernel) {
  auto loaded = load_local(fixture(kernel), cpu_env(), map_environment({}));
  if (!loaded) FAIL(loaded.error().message);
  return *std::move(loaded);
}

bool loaded_in_process(const char* soname) {
  void* handle = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

at::Tensor poisoned(at::IntArrayRef shape) {
  return torch::full(shape, std::numeric_limits<float>::quiet_NaN(), torch::kFloat32);
}

// The largest error against the float64 reference, relative to the reference's largest value (an
// element-wise relative error is meaningless where the reference is near zero).
double rel_error(const at::Tensor& out, const at::Tensor& ref) {
  return ((out.to(torch::kFloat64) - ref).abs().max() / ref.abs().max().clamp_min(1.0)).item<double>();
}

// Runs every op of a kb-activation kernel on fresh random inputs against float64 torch, the
// outputs poisoned first, at several shapes including odd ones. `Input` is the input reference
// type the caller's signatures use (classic ops were registered with `at::Tensor&`).
template <typename Input>
void check_ops_against_torch(const Kernel& kernel) {
  using Gated = void(at::Tensor&, Input);
  auto silu_and_mul = kernel.op<Gated>("silu_and_mul");
  auto gelu_and_mul = kernel.op<Gated>("gelu_tanh_and_mul");
  auto fatrelu_and_mul = kernel.op<void(at::Tensor&, Input, double)>("fatrelu_and_mul");
  auto scale_shift =
      kernel.op<at::Tensor(const at::Tensor&, const std::optional<at::Tensor>&, double, int64_t)>("scale_shift");
  for (const auto& shape : std::vector<std::vector<int64_t>>{{1, 2}, {3, 14}, {2, 5, 38}, {7, 1026}, {0, 8}}) {
    INFO("input shape " << c10::IntArrayRef(shape));
    at::Tensor x = torch::randn(shape, torch::kFloat32) * 3;
    const int64_t d = shape.back() / 2;
    std::vector<int64_t> half = shape;
    half.back() = d;
    const auto x64 = x.to(torch::kFloat64);
    const auto gate = x64.narrow(-1, 0, d);
    const auto up = x64.narrow(-1, d, d);

    auto out = poisoned(half);
    silu_and_mul.call(out, x);
    if (out.numel() > 0) CHECK(rel_error(out, gate * torch::sigmoid(gate) * up) < 1e-6);

    out = poisoned(half);
    gelu_and_mul.call(out, x);
    if (out.numel() > 0) CHECK(rel_error(out, torch::gelu(gate, "tanh") * up) < 1e-5);

    out = poisoned(half);
    fatrelu_and_mul.call(out, x, 0.5);
    if (out.numel() > 0) CHECK(rel_error(out, torch::where(gate > 0.5, gate, torch::zeros_like(gate)) * up) < 1e-6);
    CHECK_FALSE(out.isnan().any().item<bool>());

    const auto shift = torch::randn({shape.back()}, torch::kFloat32);
    const auto y = scale_shift.call(x, shift, 0.25, 3);
    if (y.numel() > 0) CHECK(rel_error(y, x64.pow(3) * 0.25 + shift.to(torch::kFloat64)) < 1e-6);
    const auto no_shift = scale_shift.call(x, std::nullopt, -2.0, 0);
    CHECK(torch::equal(no_shift, torch::full_like(x, -2.0)));
  }
  // The boxed path, checked against the schema too.
  const auto x = torch::randn({4, 6});
  const auto boxed = kernel.call("scale_shift", x, c10::IValue(), 1.5, int64_t{2});
  REQUIRE(boxed.size() == 1);
  CHECK(rel_error(boxed[0].toTensor(), x.to(torch::kFloat64).pow(2) * 1.5) < 1e-6);
}

TEST_CASE("a kernel-builder classic variant linked against the torch target loads without LD_LIBRARY_PATH") {
  REQUIRE_FALSE(loader::process_has_python());
  REQUIRE_FALSE(loaded_in_process("libtorch.so"));
  const Kernel kernel = load("kb-activation");
  CHECK(kernel.variant().starts_with("torch"));
  CHECK(kernel.variant().find("-cxx11-cpu-") != std::string::npos);
  // What `import torch` would have loaded, from torch's own directory.
  CHECK(loaded_in_process("libtorch.so"));
  REQUIRE(kernel.ops().size() == 4);
  CHECK(kernel.ops()[0].name == "fatrelu_and_mul");
  CHECK_THAT(kernel.ops()[0].schema,
             Catch::EndsWith("fatrelu_and_mul(Tensor(a!) out, Tensor input, float threshold) -> ()"));
  check_ops_against_torch<at::Tensor&>(kernel);
}

TEST_CASE("a Torch stable-ABI variant loads and its boxed ops run through typed handles") {
  const Kernel kernel = load("kb-activation-stable");
  CHECK(kernel.variant().starts_with("torch-stable-abi"));
  REQUIRE(kernel.ops().size() == 4);
  CHECK_THAT(kernel.ops()[2].schema,
             Catch::EndsWith("scale_shift(Tensor input, Tensor? shift, float scale, int power) -> Tensor"));
  // A boxed kernel has no C++ signature: either form of an input reference reaches it.
  check_ops_against_torch<const at::Tensor&>(kernel);
  check_ops_against_torch<at::Tensor&>(kernel);
}

// The typed-handle check, for an op registered with a C++ signature and for a boxed one.
TEST_CASE("a typed handle with a wrong signature is refused, naming the schema and the signature to write") {
  const auto kernel_name = GENERATE(as<std::string>{}, "kb-activation", "kb-activation-stable");
  INFO(kernel_name);
  const Kernel kernel = load(kernel_name);
  auto refused = [&](auto make, const std::string& expected, bool typed = true) {
    try {
      make();
      FAIL("a wrong signature was accepted");
    } catch (const OpSchemaMismatchError& e) {
      CHECK(e.code() == ErrorCode::kOpSchemaMismatch);
      CHECK_THAT(e.what(), Catch::Contains(expected));
      CHECK_THAT(e.what(), Catch::Contains("its schema is `"));
      if (typed) CHECK_THAT(e.what(), Catch::Contains("Use op<"));
    }
  };
  refused([&] { (void)kernel.op<void(at::Tensor&)>("silu_and_mul"); }, "the schema has 2 argument(s), the signature 1");
  refused([&] { (void)kernel.op<void(const at::Tensor&, const at::Tensor&)>("silu_and_mul"); },
          "is written by the op, so the signature must take it as `at::Tensor&`");
  refused([&] { (void)kernel.op<void(at::Tensor&, at::Tensor&, int64_t)>("fatrelu_and_mul"); },
          "is float in the schema but int in the signature");
  refused([&] { (void)kernel.op<at::Tensor(const at::Tensor&, const at::Tensor&, double, int64_t)>("scale_shift"); },
          "is Tensor? in the schema but Tensor in the signature");
  refused(
      [&] {
        (void)kernel.op<void(const at::Tensor&, const std::optional<at::Tensor>&, double, int64_t)>("scale_shift");
      },
      "the schema returns 1 value(s), the signature 0");
  refused(
      [&] {
        (void)kernel.call("fatrelu_and_mul", poisoned({2, 2}), torch::randn({2, 4}), std::string("x"));
      },
      "cannot be called with these arguments", false);
  CHECK_THROWS_AS(kernel.op<void(at::Tensor&, at::Tensor&)>("no_such_op"), NotFoundError);
  CHECK_THROWS_WITH(kernel.op<void(at::Tensor&, at::Tensor&)>("no_such_op"),
                    Catch::Contains("its ops are: fatrelu_and_mul, gelu_tanh_and_mul, scale_shift, silu_and_mul"));
}

TEST_CASE("a classic op's registered C++ signature is checked too, and suggested") {
  const Kernel kernel = load("kb-activation");
  // Fits the schema, but the op was registered with `at::Tensor&` for its input: c10 would refuse
  // the call; kernelhub says so before any call, as the same typed error.
  try {
    (void)kernel.op<void(at::Tensor&, const at::Tensor&)>("silu_and_mul");
    FAIL("a signature other than the registered one was accepted");
  } catch (const OpSchemaMismatchError& e) {
    CHECK_THAT(e.what(), Catch::Contains("silu_and_mul(Tensor(a!) out, Tensor input) -> ()"));
  }
}

TEST_CASE("a stable-ABI variant for a newer torch is not selected, with the reason in the trace") {
  const auto root = std::filesystem::temp_directory_path() / ("kh_kb_newer_" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  const auto env = cpu_env();
  const auto stable_dir = *std::filesystem::directory_iterator(fixture("kb-activation-stable") / "build");
  const std::string newer = "torch-stable-abi" + std::to_string(env.torch->major) +
                            std::to_string(env.torch->minor + 1) + "-cpu-" + env.cpu + "-" + env.os;
  std::filesystem::create_directories(root / "build");
  std::filesystem::copy(stable_dir.path(), root / "build" / newer, std::filesystem::copy_options::recursive);
  const auto result = load_local(root, env, map_environment({}));
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().code == ErrorCode::kNoCompatibleVariant);
  CHECK_THAT(result.error().message, Catch::Contains(newer) && Catch::Contains("stable ABI"));
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace kernelhub
