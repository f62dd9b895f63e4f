// Gets the reference kernels through kernelhub and checks rms_norm against a float64 reference.
//
//   LOCAL_KERNELS=kernelhub/reference-kernels=build/kernels build/bin/rms_norm_example
#include <torch/torch.h>

#include <cstdio>

#include "kernelhub/kernelhub.hpp"

namespace {

// Qwen3RMSNorm in float64: the reference every dtype is compared against.
torch::Tensor reference(const torch::Tensor& x, const torch::Tensor& w, double eps) {
  const auto x64 = x.to(torch::kFloat64);
  const auto inv = torch::rsqrt(x64.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return x64 * inv * w.to(torch::kFloat64);
}

}  // namespace

int main(int argc, char** argv) {
  const char* repo = argc > 1 ? argv[1] : "kernelhub/reference-kernels";
  try {
    const kernelhub::Kernel kernel = kernelhub::get_kernel(repo, {.version = 1});
    // A CUDA variant runs on the GPU: get_kernel loaded torch's CUDA half for it.
    const torch::Device device = kernel.metadata().backend == "cuda" ? torch::kCUDA : torch::kCPU;
    std::printf("variant %s, namespace %s, device %s\n", kernel.variant().c_str(), kernel.ns().c_str(),
                device.str().c_str());
    auto rms_norm =
        kernel.op<void(at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, double)>("rms_norm");
    int failures = 0;
    for (auto [dtype, name, tolerance] : {std::tuple{torch::kFloat32, "fp32", 1e-5},
                                          std::tuple{torch::kBFloat16, "bf16", 1e-2}}) {
      const auto x = torch::randn({64, 4096}).to(device, dtype);
      const auto w = (1 + 0.1 * torch::randn({4096})).to(device, dtype);
      auto out = torch::full_like(x, std::numeric_limits<float>::quiet_NaN());  // poisoned
      rms_norm.call(out, x, w, 1e-6);
      const auto ref = reference(x.cpu(), w.cpu(), 1e-6);
      const auto got = out.cpu().to(torch::kFloat64);
      const double max_error = (got - ref).abs().max().item<double>();
      const double rel_error = ((got - ref).norm() / ref.norm()).item<double>();
      const bool ok = rel_error < tolerance && std::isfinite(max_error);
      std::printf("rms_norm %s [64, 4096]: max abs error %.3g, relative error %.3g (tolerance %.0e) %s\n", name,
                  max_error, rel_error, tolerance, ok ? "ok" : "FAILED");
      failures += ok ? 0 : 1;
    }
    return failures == 0 ? 0 : 1;
  } catch (const kernelhub::KernelhubError& e) {
    std::fprintf(stderr, "rms_norm_example: %s\n", e.what());
    return 1;
  }
}
