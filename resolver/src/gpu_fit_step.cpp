#include "kernelhub/resolver/internal/gpu_fit_step.hpp"

#include <algorithm>
#include <utility>

#include "kernelhub/resolver/gpu_fit.hpp"

namespace kernelhub::resolver {

void apply_gpu_fit(std::vector<Decision>& decisions, const Environment& env, const DeviceCodeLookup& code_of) {
  // Each decision with its fit rank; accepted ones without known code rank as "not checked".
  std::vector<std::pair<Decision, GpuFitKind>> ranked;
  ranked.reserve(decisions.size());
  for (auto& d : decisions) {
    GpuFitKind kind = GpuFitKind::kNotChecked;
    if (d.accepted() && d.variant && d.variant->backend.kind == BackendKind::kCuda) {
      if (auto code = code_of(d)) {
        GpuFit fit = fit_gpus({std::move(*code), env.gpus, env.cuda_driver, d.variant->backend.version});
        kind = fit.kind;
        if (fit.runs()) {
          d.reason = reason::Compatible{std::move(fit)};
        } else {
          d.reason = reason::GpuMismatch{std::move(fit)};
        }
      }
    }
    ranked.emplace_back(std::move(d), kind);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.first.accepted() != b.first.accepted()) return a.first.accepted();
    return a.first.accepted() && a.second < b.second;  // rejected ones keep select()'s order
  });
  decisions.clear();
  for (auto& [d, kind] : ranked) decisions.push_back(std::move(d));
}

}  // namespace kernelhub::resolver
