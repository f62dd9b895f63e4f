#include "kernelhub/tvm_ffi.hpp"

#include <stdlib.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <random>

namespace kernelhub::tvm_ffi {
namespace {

// The reference kernels' build folder; its tvm-ffi CPU variant is what these tests load.
const std::filesystem::path kKernels = KERNELHUB_KERNELS_DIR;

// The process runs as a C++ program without Python: the runtime comes from the project's virtual
// environment, found from files.
struct Environment {
  Environment() { setenv("VIRTUAL_ENV", KERNELHUB_VENV, 1); }
};
const Environment kEnvironment;

struct Tensor2d {
  std::vector<float> data;
  std::vector<std::int64_t> shape;
  DLTensor tensor{};
  Tensor2d(std::int64_t rows, std::int64_t cols) : data(static_cast<std::size_t>(rows * cols)), shape{rows, cols} {
    tensor.data = data.data();
    tensor.device = DLDevice{kDLCPU, 0};
    tensor.ndim = 2;
    tensor.dtype = DLDataType{kDLFloat, 32, 1};
    tensor.shape = shape.data();
  }
};

TEST_CASE("get_local_kernel picks the tvm-ffi variant and says why the torch ones are out") {
  const Kernel kernel = get_local_kernel(kKernels);
  CHECK(kernel.variant().starts_with("tvm-ffi01-cpu-"));
  CHECK(kernel.backend() == "cpu");
  CHECK(kernel.runtime_version().starts_with("0.1."));
  bool saw_torch = false;
  for (const auto& d : kernel.decisions()) {
    if (!d.name.starts_with("torch")) continue;
    saw_torch = true;
    CHECK(resolver::to_string(d.reason) ==
          "needs LibTorch, which this process does not have; only tvm-ffi variants load here");
  }
  CHECK(saw_torch);
  std::vector<std::string> names;
  for (const auto& f : kernel.functions()) names.push_back(f.name);
  CHECK(std::find(names.begin(), names.end(), "rms_norm_cpu") != names.end());
  CHECK(std::find(names.begin(), names.end(), "adaln_cpu") != names.end());
  CHECK(kernel.function("rms_norm").name() == "rms_norm_cpu");
  REQUIRE(kernel.function("rms_norm").signature());
  CHECK(kernel.function("rms_norm").signature()->to_string("rms_norm_cpu") ==
        "rms_norm_cpu(Tensor, Tensor, Optional[Tensor], float) -> None");
}

TEST_CASE("rms_norm on the caller's own tensors matches a float64 reference") {
  const Kernel kernel = get_local_kernel(kKernels);
  const std::int64_t rows = 7, hidden = 96;
  Tensor2d x(rows, hidden), out(rows, hidden);
  std::vector<float> weight(hidden);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (float& v : x.data) v = normal(rng);
  for (float& v : weight) v = normal(rng);
  std::vector<std::int64_t> weight_shape{hidden};
  DLTensor w{weight.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, weight_shape.data(), nullptr, 0};
  kernel.call("rms_norm", &out.tensor, &x.tensor, &w, 1e-6);
  double worst = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    double squares = 0;
    for (std::int64_t i = 0; i < hidden; ++i) squares += double(x.data[r * hidden + i]) * x.data[r * hidden + i];
    const double inv = 1.0 / std::sqrt(squares / hidden + 1e-6);
    for (std::int64_t i = 0; i < hidden; ++i) {
      const double expected = x.data[r * hidden + i] * inv * weight[i];
      worst = std::max(worst, std::abs(out.data[r * hidden + i] - expected) / (1 + std::abs(expected)));
    }
  }
  CHECK(worst < 1e-5);
}

TEST_CASE("the kernel's own checks come back as KernelRaisedError with its message") {
  const Kernel kernel = get_local_kernel(kKernels);
  Tensor2d x(2, 8), out(2, 8);
  out.tensor.dtype = DLDataType{kDLInt, 64, 1};
  std::vector<std::int64_t> wide(16);
  out.tensor.data = wide.data();
  try {
    kernel.call("rms_norm", &out.tensor, &x.tensor, std::nullopt, 1e-6);
    FAIL("no error");
  } catch (const KernelRaisedError& e) {
    CHECK(e.kind() == "RuntimeError");
    CHECK(e.kernel_message() == "rms_norm: out has dtype Long, input has Float");
    CHECK(e.code() == ErrorCode::kKernelRaised);
  }
  // A tensor on a device this CPU build does not serve.
  x.tensor.device = DLDevice{kDLCUDA, 0};
  CHECK_THROWS_MATCHES(kernel.call("rms_norm", &out.tensor, &x.tensor, std::nullopt, 1e-6), KernelRaisedError,
                       Catch::Message("`rms_norm_cpu` raised RuntimeError: rms_norm: this is the CPU implementation; "
                                      "the tensor is on cuda:0"));
}

TEST_CASE("wrong arguments are refused before the call, and unknown functions are named") {
  const Kernel kernel = get_local_kernel(kKernels);
  Tensor2d x(1, 4), out(1, 4);
  CHECK_THROWS_AS(kernel.call("rms_norm", &out.tensor, &x.tensor), OpSchemaMismatchError);
  CHECK_THROWS_MATCHES(kernel.call("rms_norm", &out.tensor, 1e-6, std::nullopt, 1e-6), OpSchemaMismatchError,
                       Catch::Message("`rms_norm_cpu(Tensor, Tensor, Optional[Tensor], float) -> None`: argument 1 "
                                      "must be Tensor, got float 1e-06; nothing was called"));
  try {
    kernel.function("softmax");
    FAIL("no error");
  } catch (const NotFoundError& e) {
    CHECK_THAT(e.what(), Catch::Contains("has no function `softmax` (nor `softmax_cpu`)"));
    CHECK_THAT(e.what(), Catch::Contains("rms_norm_cpu"));
  }
}

TEST_CASE("get_kernel honours LOCAL_KERNELS like kernelhub::get_kernel") {
  setenv("LOCAL_KERNELS", ("kernelhub/reference-kernels=" + kKernels.string()).c_str(), 1);
  const Kernel kernel = get_kernel("kernelhub/reference-kernels");
  unsetenv("LOCAL_KERNELS");
  CHECK(kernel.variant().starts_with("tvm-ffi01-cpu-"));
  CHECK(kernel.revision() == "local");
}

TEST_CASE("this program maps no LibTorch and no libpython") {
  const Kernel kernel = get_local_kernel(kKernels);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    INFO(line);
    CHECK(line.find("libtorch") == std::string::npos);
    CHECK(line.find("libc10") == std::string::npos);
    CHECK(line.find("libpython") == std::string::npos);
  }
}

}  // namespace
}  // namespace kernelhub::tvm_ffi
