#include "kernelhub/resolver/select.hpp"

#include <algorithm>
#include <tuple>

namespace kernelhub::resolver {

namespace {

// Why `v` can or cannot run in `env`. The checks run in the order of `_check_variants`.
Reason check(const Variant& v, const Environment& env, const SelectOptions& options) {
  if (v.is_arch()) {
    if (env.python_free_threaded && env.python && *env.python < Version{3, 15}) return reason::FreeThreadedPython{};
    if (v.cpu != env.cpu) return reason::CpuMismatch{v.cpu, env.cpu};
    if (v.os != env.os) return reason::OsMismatch{v.os, env.os};
    switch (v.framework) {
      case Framework::kTorch: {
        if (!env.torch || v.framework_version != *env.torch) {
          return reason::TorchVersion{v.framework_version, env.torch};
        }
        // The kernels package knows the ABI only on Linux (None elsewhere), so an ABI-tagged
        // variant fits only a Linux torch of that ABI.
        if (v.cxx11_abi && env.os != "linux") return reason::CxxAbi{v.cxx11_abi, std::nullopt};
        if (v.cxx11_abi && v.cxx11_abi != env.cxx11_abi) return reason::CxxAbi{v.cxx11_abi, env.cxx11_abi};
        break;
      }
      case Framework::kTorchStableAbi:
        if (!env.torch || v.framework_version > *env.torch) {
          return reason::StableAbiTooNew{v.framework_version, env.torch};
        }
        break;
      case Framework::kTvmFfi:
        if (options.native_only) return reason::TvmFfiNotLoadable{};
        if (!env.tvm_ffi || v.framework_version != *env.tvm_ffi) {
          return reason::TvmFfiVersion{v.framework_version, env.tvm_ffi};
        }
        break;
      default:
        break;
    }
    const Backend& want = env.backend;
    if (v.backend.kind == BackendKind::kCuda && want.kind == BackendKind::kCuda) {
      if (!want.version || !v.backend.version || v.backend.version->major != want.version->major ||
          v.backend.version->minor > want.version->minor) {
        return reason::CudaVersion{v.backend.version, want.version};
      }
    } else if (v.backend.to_token() != want.to_token()) {
      return reason::BackendMismatch{v.backend, want};
    }
    return reason::Compatible{};
  }
  if (options.native_only) return reason::PurePython{};
  if (v.framework == Framework::kTorchUniversal) return reason::Compatible{};
  const BackendKind want = env.backend.kind == BackendKind::kCann ? BackendKind::kNpu : env.backend.kind;
  if (v.backend.kind != want) return reason::NoarchBackend{v.backend.kind, want};
  return reason::Compatible{};
}

// Smaller sorts first. Mirrors `_sort_variants`.
auto rank(const Variant& v) {
  int group = 0;
  int newest = 0;  // negated so that newer sorts first
  int tagged = 0;
  switch (v.framework) {
    case Framework::kTorchStableAbi:
      group = 0;
      newest = -(v.framework_version.major * 1000 + v.framework_version.minor);
      break;
    case Framework::kTorch: group = 1; tagged = v.cxx11_abi ? 1 : 0; break;
    case Framework::kTvmFfi: group = 2; break;
    case Framework::kTorchNoarch: group = 3; break;
    case Framework::kTorchUniversal: group = 4; break;
  }
  const int backend_minor = v.backend.version ? -v.backend.version->minor : 0;
  return std::make_tuple(group, newest, tagged, backend_minor);
}

}  // namespace

std::vector<Decision> select(const std::vector<std::string>& names, const Environment& env,
                             const SelectOptions& options) {
  std::vector<Decision> decisions;
  decisions.reserve(names.size());
  for (const std::string& name : names) {
    Decision d;
    d.name = name;
    auto parsed = Variant::parse(name);
    if (!parsed) {
      d.reason = reason::UnparsableName{parsed.error().message};
    } else {
      d.variant = *parsed;
      d.reason = check(*parsed, env, options);
    }
    decisions.push_back(std::move(d));
  }
  std::stable_sort(decisions.begin(), decisions.end(), [](const Decision& a, const Decision& b) {
    if (a.accepted() != b.accepted()) return a.accepted();
    if (!a.accepted()) return a.name < b.name;
    return rank(*a.variant) < rank(*b.variant);
  });
  return decisions;
}

const Decision* chosen(const std::vector<Decision>& decisions) {
  return !decisions.empty() && decisions.front().accepted() ? &decisions.front() : nullptr;
}

std::string format_trace(const std::vector<Decision>& decisions) {
  std::string out;
  for (std::size_t i = 0; i < decisions.size(); ++i) {
    const Decision& d = decisions[i];
    // Accepted lines stay short, as the `kernels` package prints them: how a variant runs on
    // the GPUs is in its reason, not in the trace.
    out += d.name + ": " + (d.accepted() ? to_string(reason::Compatible{}) : to_string(d.reason));
    if (d.accepted() && i == 0) out += ", preferred \u2705";
    out += "\n";
  }
  return out;
}

}  // namespace kernelhub::resolver
