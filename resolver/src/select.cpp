#include "kernelhub/resolver/select.hpp"

#include <algorithm>
#include <tuple>

namespace kernelhub::resolver {

namespace {

std::string opt_version(const std::optional<Version>& v) { return v ? v->to_string() : "none"; }

// Returns the rejection reason, or an empty string when `v` can run in `env`.
std::string check(const Variant& v, const Environment& env, const SelectOptions& options) {
  if (v.is_arch()) {
    if (env.python_free_threaded && env.python && *env.python < Version{3, 15}) {
      return "arch kernel not supported on free-threaded Python <3.15";
    }
    if (v.cpu != env.cpu) return "CPU (" + v.cpu + ") does not match system CPU (" + env.cpu + ")";
    if (v.os != env.os) return "OS (" + v.os + ") does not match system OS (" + env.os + ")";
    switch (v.framework) {
      case Framework::kTorch:
        if (!env.torch || v.framework_version != *env.torch) {
          return "Torch version (" + v.framework_version.to_string() +
                 ") does not match environment Torch version (" + opt_version(env.torch) + ")";
        }
        if (v.cxx11_abi && env.cxx11_abi && *v.cxx11_abi != *env.cxx11_abi) {
          return std::string("C++ ABI (") + (*v.cxx11_abi ? "cxx11" : "cxx98") +
                 ") does not match environment C++ ABI (" + (*env.cxx11_abi ? "cxx11" : "cxx98") + ")";
        }
        break;
      case Framework::kTorchStableAbi:
        if (!env.torch || v.framework_version > *env.torch) {
          return "Torch stable ABI version (" + v.framework_version.to_string() +
                 ") is newer than environment Torch version (" + opt_version(env.torch) + ")";
        }
        break;
      case Framework::kTvmFfi:
        return "tvm-ffi builds are not loadable by kernelhub";
      default:
        break;
    }
    const Backend& want = env.backend;
    if (v.backend.kind != want.kind) {
      return "backend (" + v.backend.to_environment() + ") does not match selected backend (" +
             want.to_environment() + ")";
    }
    if (v.backend.kind == BackendKind::kCuda) {
      if (!want.version || !v.backend.version || v.backend.version->major != want.version->major ||
          v.backend.version->minor > want.version->minor) {
        return "CUDA version (" + opt_version(v.backend.version) + ") is not compatible with system CUDA version (" +
               opt_version(want.version) + ")";
      }
    } else if (v.backend.version != want.version) {
      return "backend (" + v.backend.to_environment() + ") does not match selected backend (" +
             want.to_environment() + ")";
    }
    return {};
  }
  if (options.native_only) return "pure-Python variant; only a Python process can load it";
  if (v.framework == Framework::kTorchUniversal) return {};
  BackendKind want = env.backend.kind == BackendKind::kCann ? BackendKind::kNpu : env.backend.kind;
  if (v.backend.kind != want) {
    return "noarch backend (" + std::string(v.backend.kind_name()) + ") does not match selected backend (" +
           std::string(Backend{want, {}}.kind_name()) + ")";
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
