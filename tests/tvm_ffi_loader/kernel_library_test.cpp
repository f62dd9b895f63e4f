#include "kernelhub/tvm_ffi_loader/internal/kernel_library.hpp"

#include <dlfcn.h>

#include <catch2/catch.hpp>

#include <array>
#include <variant>

namespace kernelhub::tvm_ffi_loader {
namespace {

const EnvironmentSource kEnv = map_environment({{"VIRTUAL_ENV", KERNELHUB_VENV}, {"PATH", "/nonexistent"}});
const resolver::Version kTvmFfi01{0, 1};

std::shared_ptr<const KernelLibrary> fixture() {
  auto runtime = Runtime::of_process(kEnv);
  REQUIRE(runtime);
  auto library =
      KernelLibrary::load(KERNELHUB_TVM_FFI_FIXTURE, *runtime, kTvmFfi01, "tvm-ffi01-cpu-x86_64-linux", kEnv);
  REQUIRE(library);
  return *library;
}

// A float32 CPU tensor over `data` with compact (null) strides.
struct Floats {
  std::vector<float> data;
  std::vector<std::int64_t> shape;
  DLTensor tensor{};
  explicit Floats(std::size_t n, float fill = 0) : data(n, fill), shape{static_cast<std::int64_t>(n)} {
    tensor.data = data.data();
    tensor.device = DLDevice{kDLCPU, 0};
    tensor.ndim = 1;
    tensor.dtype = DLDataType{kDLFloat, 32, 1};
    tensor.shape = shape.data();
  }
};

Value value_of(Result<Outcome> outcome) {
  REQUIRE(outcome);
  REQUIRE(std::holds_alternative<Value>(*outcome));
  return std::get<Value>(std::move(*outcome));
}

Runtime::Raised raised_by(Result<Outcome> outcome) {
  REQUIRE(outcome);
  REQUIRE(std::holds_alternative<Runtime::Raised>(*outcome));
  return std::get<Runtime::Raised>(std::move(*outcome));
}

TEST_CASE("a loaded library lists its functions, with signatures where it exports them") {
  const auto library = fixture();
  std::vector<std::string> names;
  for (const auto& f : library->functions()) names.push_back(f.name);
  CHECK(names == std::vector<std::string>{"add_one", "fill_cpu", "greeting", "iota", "raise_value_error", "stream_of",
                                          "times_two"});
  REQUIRE(library->find("fill_cpu")->signature);
  CHECK(library->find("fill_cpu")->signature->to_string("fill_cpu") ==
        "fill_cpu(Tensor, Optional[Tensor], float) -> None");
  CHECK(library->find("add_one")->signature->to_string("add_one") == "add_one(int) -> int");
  CHECK(library->find("greeting")->signature->returns.to_string() == "str");
  CHECK_FALSE(library->find("times_two")->signature);
  CHECK(library->find("times_two")->metadata_problem.empty());
  // Loading the same file again gives the same library.
  CHECK(fixture().get() == library.get());
}

TEST_CASE("scalars and tensors go in and values come out") {
  const auto library = fixture();
  const std::array<Argument, 1> forty_one{41};
  CHECK(std::get<std::int64_t>(value_of(library->call("add_one", forty_one)).value) == 42);

  Floats out(5), offset(5, 0.5f);
  const std::array<Argument, 3> args{&out.tensor, &offset.tensor, 2.0};
  CHECK(std::holds_alternative<None>(value_of(library->call("fill_cpu", args)).value));
  CHECK(out.data == std::vector<float>(5, 2.5f));
  const std::array<Argument, 3> no_offset{&out.tensor, std::nullopt, 1};  // an int where a float goes
  value_of(library->call("fill_cpu", no_offset));
  CHECK(out.data == std::vector<float>(5, 1.0f));

  const std::array<Argument, 1> loud{true};
  CHECK(std::get<std::string>(value_of(library->call("greeting", loud)).value) == "HELLO FROM THE KERNEL");
  const std::array<Argument, 1> quiet{false};
  CHECK(std::get<std::string>(value_of(library->call("greeting", quiet)).value) == "hi");  // a small string
}

TEST_CASE("a tensor the kernel returns is owned and released") {
  const auto library = fixture();
  const std::array<Argument, 1> four{4};
  const Value v = value_of(library->call("iota", four));
  const auto& tensor = std::get<OwnedTensor>(v.value).tensor();
  REQUIRE(tensor.ndim == 1);
  CHECK(tensor.shape[0] == 4);
  CHECK(static_cast<const std::int64_t*>(tensor.data)[3] == 3);
  CHECK(v.describe() == "Tensor int64[4] on cpu:0");
}

TEST_CASE("arguments that do not fit the signature are refused before the call") {
  const auto library = fixture();
  Floats out(3, 7.0f);
  const std::array<Argument, 2> too_few{&out.tensor, std::nullopt};
  auto refused = library->call("fill_cpu", too_few);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::kOpSchemaMismatch);
  CHECK(refused.error().message ==
        "`fill_cpu(Tensor, Optional[Tensor], float) -> None`: it takes 3 argument(s), 2 given; nothing was called");
  const std::array<Argument, 3> wrong_kind{1.5, std::nullopt, 1.0};
  refused = library->call("fill_cpu", wrong_kind);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("argument 0 must be Tensor, got float 1.5"));
  const std::array<Argument, 3> none_for_float{&out.tensor, std::nullopt, std::nullopt};
  refused = library->call("fill_cpu", none_for_float);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("argument 2 must be float, got None"));
  CHECK(out.data == std::vector<float>(3, 7.0f));  // nothing ran
}

TEST_CASE("without a signature the kernel's own argument check raises, as a value") {
  const auto library = fixture();
  const std::array<Argument, 2> two{1, 2};
  const Runtime::Raised raised = raised_by(library->call("times_two", two));
  CHECK(raised.kind == "TypeError");
  CHECK_THAT(raised.message, Catch::Contains("Expected 1 but got 2 arguments"));
  const std::array<Argument, 1> one{21};
  CHECK(std::get<std::int64_t>(value_of(library->call("times_two", one)).value) == 42);
}

TEST_CASE("an error the kernel raises comes back with its kind and message") {
  const auto library = fixture();
  const std::array<Argument, 1> code{7};
  const Runtime::Raised raised = raised_by(library->call("raise_value_error", code));
  CHECK(raised.kind == "ValueError");
  CHECK(raised.message == "the kernel refused code 7");
  // The kernel's checks on its tensors: the wrong device and the wrong dtype.
  Floats out(2);
  out.tensor.device = DLDevice{kDLCUDA, 0};
  const std::array<Argument, 3> cuda_out{&out.tensor, std::nullopt, 1.0};
  const Runtime::Raised device = raised_by(library->call("fill_cpu", cuda_out));
  CHECK(device.kind == "ValueError");
  CHECK_THAT(device.message, Catch::EndsWith("fill: out must be a CPU tensor"));  // after TVM_FFI_CHECK's prefix
  out.tensor.device = DLDevice{kDLCPU, 0};
  out.tensor.dtype = DLDataType{kDLFloat, 16, 1};
  const Runtime::Raised dtype = raised_by(library->call("fill_cpu", cuda_out));
  CHECK(dtype.kind == "TypeError");
  // The error was taken: the next call in this thread succeeds.
  CHECK(std::get<std::int64_t>(value_of(library->call("add_one", std::array<Argument, 1>{1})).value) == 2);
}

TEST_CASE("a function that does not exist is named with the ones that do") {
  const auto library = fixture();
  const auto missing = library->call("rms_norm_cuda", {});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::kNotFound);
  CHECK_THAT(missing.error().message, Catch::Contains("no TVM-FFI function `rms_norm_cuda`"));
  CHECK_THAT(missing.error().message, Catch::Contains("add_one, fill_cpu"));
}

TEST_CASE("a call's stream is the one TVM-FFI holds for the tensors' device, restored after") {
  const auto library = fixture();
  Floats gpu(1);
  gpu.tensor.device = DLDevice{kDLCUDA, 1};
  const std::array<Argument, 1> args{&gpu.tensor};
  void* const stream = reinterpret_cast<void*>(0x5eed);
  const Value during = value_of(library->call("stream_of", args, {.stream = stream}));
  CHECK(std::get<std::int64_t>(during.value) == 0x5eed);
  CHECK(library->runtime().current_stream(kDLCUDA, 1) == nullptr);
  CHECK(std::get<std::int64_t>(value_of(library->call("stream_of", args)).value) == 0);
}

TEST_CASE("a kernel built for another TVM-FFI version is refused and not loaded") {
  auto runtime = Runtime::of_process(kEnv);
  REQUIRE(runtime);
  const auto refused = KernelLibrary::load(KERNELHUB_TVM_FFI_NEEDS_TORCH, *runtime, resolver::Version{0, 2},
                                           "tvm-ffi02-cpu-x86_64-linux", kEnv);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::kIncompatibleBinary);
  CHECK_THAT(refused.error().message, Catch::Contains("built for TVM-FFI 0.2"));
  void* handle = dlopen(KERNELHUB_TVM_FFI_NEEDS_TORCH, RTLD_LAZY | RTLD_NOLOAD);
  CHECK(handle == nullptr);
}

TEST_CASE("a tvm-ffi variant whose library needs LibTorch is refused and not loaded") {
  auto runtime = Runtime::of_process(kEnv);
  REQUIRE(runtime);
  const auto refused =
      KernelLibrary::load(KERNELHUB_TVM_FFI_NEEDS_TORCH, *runtime, kTvmFfi01, "tvm-ffi01-cpu-x86_64-linux", kEnv);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::kIncompatibleBinary);
  CHECK_THAT(refused.error().message, Catch::Contains("it needs LibTorch"));
  void* handle = dlopen(KERNELHUB_TVM_FFI_NEEDS_TORCH, RTLD_LAZY | RTLD_NOLOAD);
  CHECK(handle == nullptr);
}

}  // namespace
}  // namespace kernelhub::tvm_ffi_loader
