#include "kernelhub/resolver/select.hpp"

#include <algorithm>
#include <array>

namespace kernelhub::resolver {

namespace {

// The cpython and ABI checks (`_python_mismatch`); only where a Python runs the kernel's Python parts.
std::optional<Reason> python_mismatch(const PythonAbi& python, const Environment& env) {
  if (!env.python) return std::nullopt;
  if (!python.abi3t && env.python_free_threaded) return reason::FreeThreadedPython{};
  if (*env.python < python.min) return reason::PythonTooOld{python.min, *env.python};
  return std::nullopt;
}

std::optional<Reason> system_mismatch(const Variant& v, const Environment& env) {
  if (v.cpu != env.cpu) return reason::CpuMismatch{v.cpu, env.cpu};
  if (v.os != env.os) return reason::OsMismatch{v.os, env.os};
  return std::nullopt;
}

// `_backend_mismatch`: CUDA and ROCm of the same major and a minor not newer; others equal.
std::optional<Reason> backend_mismatch(const Variant& v, const Environment& env) {
  const Backend& want = env.backend;
  const auto newer_or_other_major = [&] {
    return !want.version || !v.backend.version || v.backend.version->major != want.version->major ||
           v.backend.version->minor > want.version->minor;
  };
  if (v.backend.kind == BackendKind::kCuda && want.kind == BackendKind::kCuda) {
    if (newer_or_other_major()) return reason::CudaVersion{v.backend.version, want.version};
  } else if (v.backend.kind == BackendKind::kRocm && want.kind == BackendKind::kRocm) {
    if (newer_or_other_major()) return reason::RocmVersion{v.backend.version, want.version};
  } else if (v.backend.to_token() != want.to_token()) {
    return reason::BackendMismatch{v.backend, want, v.form};
  }
  return std::nullopt;
}

Reason check_arch(const Variant& v, const Environment& env, const SelectOptions& options) {
  if (auto r = python_mismatch(v.python, env)) return *r;
  if (auto r = system_mismatch(v, env)) return *r;
  switch (v.framework) {
    case Framework::kTorch: {
      if (options.native_only && !options.loads_torch) return reason::NoLibTorch{};
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
      if (options.native_only && !options.loads_torch) return reason::NoLibTorch{};
      if (!env.torch || v.framework_version > *env.torch) {
        return reason::StableAbiTooNew{v.framework_version, env.torch};
      }
      break;
    case Framework::kTvmFfi:
      if (options.native_only && !options.loads_tvm_ffi) return reason::TvmFfiNotLoadable{};
      if (!env.tvm_ffi || v.framework_version != *env.tvm_ffi) {
        return reason::TvmFfiVersion{v.framework_version, env.tvm_ffi};
      }
      break;
    default: break;
  }
  if (auto r = backend_mismatch(v, env)) return *r;
  return reason::Compatible{};
}

Reason check_sdk(const Variant& v, const Environment& env, const SelectOptions& options) {
  if (options.native_only) return reason::SdkNotLoadable{};
  if (v.is_compiled_sdk()) {
    if (auto r = python_mismatch(v.python, env)) return *r;
    if (auto r = system_mismatch(v, env)) return *r;
  }
  if (v.any_backend) return reason::Compatible{};
  if (!v.is_compiled_sdk()) {
    if (v.backend.kind != env.backend.kind) return reason::BackendMismatch{v.backend, env.backend, v.form, true};
    return reason::Compatible{};
  }
  if (auto r = backend_mismatch(v, env)) return *r;
  return reason::Compatible{};
}

// Why `v` can or cannot run in `env`. The checks run in the order of `_check_variants`.
Reason check(const Variant& v, const Environment& env, const SelectOptions& options) {
  if (v.is_arch()) return check_arch(v, env, options);
  if (v.framework == Framework::kSdk) return check_sdk(v, env, options);
  if (options.native_only) return reason::PurePython{};
  if (v.framework == Framework::kMlxNoarch) return reason::MlxMissing{};
  if (v.framework == Framework::kTorchUniversal) return reason::Compatible{};
  if (v.backend.kind != env.backend.kind) return reason::NoarchBackend{v.backend.kind, env.backend.kind};
  return reason::Compatible{};
}

// Smaller sorts first. Mirrors `_sort_variants`' key: framework group, its version order, the
// backend's minor (newer first), then the Python ABI (abi3 before abi3t, newer cpython first).
std::array<int, 7> rank(const Variant& v) {
  const int backend_minor = v.backend.versioned() && v.backend.version ? -v.backend.version->minor : 0;
  const std::array<int, 3> python{v.python.abi3t ? 1 : 0, -v.python.min.major, -v.python.min.minor};
  switch (v.framework) {
    case Framework::kTorchStableAbi:
      return {0,        -v.framework_version.major, -v.framework_version.minor, backend_minor, python[0], python[1],
              python[2]};
    case Framework::kTorch: return {1, 0, v.cxx11_abi ? 1 : 0, backend_minor, python[0], python[1], python[2]};
    case Framework::kTvmFfi: return {2, 0, 0, backend_minor, python[0], python[1], python[2]};
    case Framework::kSdk:
      if (v.is_compiled_sdk()) {
        return {3, 0, 0, v.any_backend ? 1 : backend_minor, python[0], python[1], python[2]};
      }
      return {v.any_backend ? 6 : 5, 0, 0, 0, 0, 0, 0};
    case Framework::kTorchNoarch:
    case Framework::kMlxNoarch: return {4, 0, 0, 0, 0, 0, 0};
    case Framework::kTorchUniversal: return {4, 0, 0, 1, 0, 0, 0};
  }
  return {};
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
