// On a GPU machine: kernels built the way kernel-builder builds them (tests/fixtures/kernel_builder,
// classic and stable-ABI, CUDA variants) and the reference kernels load through C++ get_kernel in a
// plain C++ process (no Python, no LD_LIBRARY_PATH for torch) and run on the GPU. Each op is checked
// against float64 torch on fresh random inputs with poisoned outputs; a wrong typed signature must
// be refused. Prints one line a check and exits non-zero if any failed.
//
//   LOCAL_KERNELS=kernels-test/kb-activation=DIR:kernels-test/kb-activation-stable=DIR:
//                 kernelhub/reference-kernels=DIR  kernel_builder_check
#include <torch/torch.h>

#include <cstdio>
#include <limits>
#include <string>

#include "kernelhub/binary_format/internal/torch_libraries.hpp"
#include "kernelhub/kernelhub.hpp"

namespace {

int failures = 0;

void report(const std::string& what, bool ok, const std::string& detail) {
  std::printf("%-4s %-58s %s\n", ok ? "ok" : "FAIL", what.c_str(), detail.c_str());
  if (!ok) ++failures;
}

std::string scientific(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2e", value);
  return text;
}

double rel_error(const at::Tensor& out, const at::Tensor& ref) {
  return ((out.cpu().to(torch::kFloat64) - ref).norm() / ref.norm().clamp_min(1e-300)).item<double>();
}

void check_kb_activation(const std::string& repo) {
  const auto start = std::chrono::steady_clock::now();
  const kernelhub::Kernel kernel = kernelhub::get_kernel(repo, {.version = 1});
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  report(repo + " loads", kernel.variant().find("-cu") != std::string::npos,
         kernel.variant() + ", " + std::to_string(kernel.ops().size()) + " ops, " + std::to_string(ms) + " ms");
  const auto cuda = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kFloat32);
  auto silu = kernel.op<void(at::Tensor&, at::Tensor&)>("silu_and_mul");
  auto gelu = kernel.op<void(at::Tensor&, at::Tensor&)>("gelu_tanh_and_mul");
  auto fatrelu = kernel.op<void(at::Tensor&, at::Tensor&, double)>("fatrelu_and_mul");
  auto scale_shift =
      kernel.op<at::Tensor(const at::Tensor&, const std::optional<at::Tensor>&, double, int64_t)>("scale_shift");
  double worst = 0;
  for (const auto& shape : std::vector<std::vector<int64_t>>{{1, 2}, {3, 14}, {2, 5, 38}, {7, 1026}, {4096, 8192}}) {
    at::Tensor x = torch::randn(shape, cuda) * 3;
    const int64_t d = shape.back() / 2;
    std::vector<int64_t> half = shape;
    half.back() = d;
    const auto x64 = x.cpu().to(torch::kFloat64);
    const auto gate = x64.narrow(-1, 0, d);
    const auto up = x64.narrow(-1, d, d);
    auto out = torch::full(half, std::numeric_limits<float>::quiet_NaN(), cuda);
    silu.call(out, x);
    worst = std::max(worst, rel_error(out, gate * torch::sigmoid(gate) * up));
    out.fill_(std::numeric_limits<float>::quiet_NaN());
    gelu.call(out, x);
    worst = std::max(worst, rel_error(out, torch::gelu(gate, "tanh") * up));
    out.fill_(std::numeric_limits<float>::quiet_NaN());
    fatrelu.call(out, x, 0.5);
    worst = std::max(worst, rel_error(out, torch::where(gate > 0.5, gate, torch::zeros_like(gate)) * up));
    const auto shift = torch::randn({shape.back()}, cuda);
    worst = std::max(
        worst, rel_error(scale_shift.call(x, shift, 0.25, 3), x64.pow(3) * 0.25 + shift.cpu().to(torch::kFloat64)));
  }
  torch::cuda::synchronize();
  report(repo + " ops on the GPU against float64", worst < 1e-5, "worst relative error " + scientific(worst));
  try {
    (void)kernel.op<void(const at::Tensor&, const at::Tensor&)>("silu_and_mul");
    report(repo + " refuses a wrong typed signature", false, "a const `out` was accepted");
  } catch (const kernelhub::OpSchemaMismatchError& e) {
    report(repo + " refuses a wrong typed signature", true, "OpSchemaMismatchError");
  }
}

void check_reference_rms_norm() {
  const kernelhub::Kernel kernel = kernelhub::get_kernel("kernelhub/reference-kernels", {.version = 1});
  report("kernelhub/reference-kernels loads", kernel.variant().find("-cu") != std::string::npos, kernel.variant());
  auto rms_norm = kernel.op<void(at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, double)>("rms_norm");
  double worst = 0;
  for (int64_t hidden : {7, 128, 2048, 4097}) {
    const auto opts = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kBFloat16);
    const auto x = torch::randn({33, hidden}, opts);
    const auto w = torch::randn({hidden}, opts);
    auto out = torch::full_like(x, std::numeric_limits<float>::quiet_NaN());
    rms_norm.call(out, x, w, 1e-6);
    const auto x64 = x.cpu().to(torch::kFloat64);
    worst = std::max(
        worst, rel_error(out, x64 * torch::rsqrt(x64.pow(2).mean(-1, true) + 1e-6) * w.cpu().to(torch::kFloat64)));
  }
  report("kernelhub/reference-kernels rms_norm (bf16) against float64", worst < 1e-2,
         "worst relative error " + scientific(worst));
}

}  // namespace

int main() {
  // This process links only torch's CPU half; a CUDA variant's get_kernel would load the rest, but
  // the inputs are made before that.
  if (auto loaded = kernelhub::binary_format::ensure_torch_cuda_loaded(); !loaded || !torch::cuda::is_available()) {
    std::fprintf(stderr, "kernel_builder_check: no CUDA device\n");
    return 2;
  }
  for (const char* repo : {"kernels-test/kb-activation", "kernels-test/kb-activation-stable"}) {
    try {
      check_kb_activation(repo);
    } catch (const std::exception& e) {
      report(std::string(repo) + " loads", false, e.what());
    }
  }
  try {
    check_reference_rms_norm();
  } catch (const std::exception& e) {
    report("kernelhub/reference-kernels loads", false, e.what());
  }
  std::printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
