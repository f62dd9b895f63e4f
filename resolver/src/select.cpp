#include "kernelhub/resolver/select.hpp"

#include <algorithm>
#include <tuple>

namespace kernelhub::resolver {

namespace {

// Versions and ABI flags as the `kernels` package prints them in its reasons (str(None) = "None").
std::string opt_version(const std::optional<Version>& v) { return v ? v->to_string() : "None"; }
std::string opt_bool(const std::optional<bool>& b) { return b ? (*b ? "True" : "False") : "None"; }

// Returns the rejection reason, or an empty string when `v` can run in `env`. The checks run in
// the order of `_check_variants`, and the reasons are its wording (backends as variant tokens).
std::string check(const Variant& v, const Environment& env, const SelectOptions& options) {
  if (v.is_arch()) {
    if (env.python_free_threaded && env.python && *env.python < Version{3, 15}) {
      return "arch kernel not supported on free-threaded Python <3.15";
    }
    if (v.cpu != env.cpu) return "CPU (" + v.cpu + ") does not match system CPU (" + env.cpu + ")";
    if (v.os != env.os) return "OS (" + v.os + ") does not match system OS (" + env.os + ")";
    switch (v.framework) {
      case Framework::kTorch: {
        if (!env.torch || v.framework_version != *env.torch) {
          return "Torch version (" + v.framework_version.to_string() +
                 ") does not match environment Torch version (" + opt_version(env.torch) + ")";
        }
        // The kernels package knows the ABI only on Linux (None elsewhere), so an ABI-tagged
        // variant fits only a Linux torch of that ABI.
        const std::optional<bool> env_abi = env.os == "linux" ? env.cxx11_abi : std::nullopt;
        if (v.cxx11_abi && v.cxx11_abi != env_abi) {
          return "Torch CXX11 ABI (" + opt_bool(v.cxx11_abi) + ") does not match environment Torch CXX11 ABI (" +
                 opt_bool(env_abi) + ")";
        }
        break;
      }
      case Framework::kTorchStableAbi:
        if (!env.torch || v.framework_version > *env.torch) {
          return "Torch stable ABI version (" + v.framework_version.to_string() +
                 ") is too new for environment Torch version (" + opt_version(env.torch) + ")";
        }
        break;
      case Framework::kTvmFfi:
        if (options.native_only) return "tvm-ffi builds are not loadable by kernelhub";
        if (!env.tvm_ffi || v.framework_version != *env.tvm_ffi) {
          return "tvm-ffi version (" + v.framework_version.to_string() +
                 ") does not match environment tvm-ffi version (" + opt_version(env.tvm_ffi) + ")";
        }
        break;
      default:
        break;
    }
    const Backend& want = env.backend;
    if (v.backend.kind == BackendKind::kCuda && want.kind == BackendKind::kCuda) {
      if (!want.version || !v.backend.version || v.backend.version->major != want.version->major ||
          v.backend.version->minor > want.version->minor) {
        return "CUDA version (" + opt_version(v.backend.version) + ") is not compatible with system CUDA version (" +
               opt_version(want.version) + ")";
      }
    } else if (v.backend.to_token() != want.to_token()) {
      return "backend (" + v.backend.to_token() + ") does not match selected backend (" + want.to_token() + ")";
    }
    return {};
  }
  if (options.native_only) return "pure-Python variant; only a Python process can load it";
  if (v.framework == Framework::kTorchUniversal) return {};
  const std::string_view want =
      env.backend.kind == BackendKind::kCann ? std::string_view("npu") : env.backend.kind_name();
  if (v.backend.kind_name() != want) {
    return "backend (" + std::string(v.backend.kind_name()) + ") does not match system backend (" +
           std::string(want) + ") and is not universal";
  }
  return {};
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
      d.reason = parsed.error().message;
    } else {
      d.variant = *parsed;
      d.reason = check(*parsed, env, options);
      d.accepted = d.reason.empty();
      if (d.accepted) d.reason = "compatible";
    }
    decisions.push_back(std::move(d));
  }
  std::stable_sort(decisions.begin(), decisions.end(), [](const Decision& a, const Decision& b) {
    if (a.accepted != b.accepted) return a.accepted;
    if (!a.accepted) return a.name < b.name;
    return rank(*a.variant) < rank(*b.variant);
  });
  return decisions;
}

const Decision* chosen(const std::vector<Decision>& decisions) {
  return !decisions.empty() && decisions.front().accepted ? &decisions.front() : nullptr;
}

std::string format_trace(const std::vector<Decision>& decisions) {
  std::string out;
  for (std::size_t i = 0; i < decisions.size(); ++i) {
    const Decision& d = decisions[i];
    out += d.name + ": ";
    out += d.accepted ? (i == 0 ? "compatible, preferred \u2705" : "compatible") : d.reason;
    out += "\n";
  }
  return out;
}

}  // namespace kernelhub::resolver
