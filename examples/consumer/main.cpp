// Loads the reference kernels' CPU variant from a directory through the installed package and
// checks rms_norm against LibTorch in float64. Usage: consumer KERNEL_DIR
#include <torch/torch.h>

#include <cstdio>

#include "kernelhub/kernelhub.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s KERNEL_DIR\n", argv[0]);
    return 2;
  }
  try {
    const kernelhub::Kernel kernel = kernelhub::get_local_kernel(argv[1], "cpu");
    auto rms_norm =
        kernel.op<void(at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, double)>("rms_norm");
    const auto x = torch::randn({7, 129}, torch::kFloat64);
    const auto w = torch::randn({129}, torch::kFloat64);
    auto out = torch::full_like(x, std::numeric_limits<double>::quiet_NaN());
    rms_norm.call(out, x, w, 1e-6);
    const auto ref = x * torch::rsqrt(x.pow(2).mean(-1, true) + 1e-6) * w;
    const double err = (out - ref).abs().max().item<double>();
    std::printf("%s: rms_norm max error %.3g\n", kernel.variant().c_str(), err);
    return err < 1e-10 ? 0 : 1;
  } catch (const kernelhub::KernelhubError& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
