#include "kernelhub/resolver/select.hpp"

#include <algorithm>
#include <array>
#include <tuple>

namespace kernelhub::resolver {

namespace {

// `_python_mismatch`; only where a Python runs the kernel's Python parts.
std::optional<Reason> python_mismatch(const PythonAbi& python, const Environment& env) {
  if (!env.python) return std::nullopt;
  if (!python.abi3t && env.python_free_threaded) return reason::FreeThreadedPython{};
  if (*env.python < python.min) return reason::PythonTooOld{python.min, *env.python};
  return std::nullopt;
}

// `_system_mismatch`.
std::optional<Reason> system_mismatch(const Variant& v, const Environment& env) {
  if (v.cpu != env.cpu) return reason::CpuMismatch{v.cpu, env.cpu};
  if (v.os != env.os) return reason::OsMismatch{v.os, env.os};
  return std::nullopt;
}

// `_backend_mismatch`: CUDA and ROCm of the same major and a minor not newer; others equal;
// Metal only on a new enough macOS.
std::optional<Reason> backend_mismatch(const Backend& backend, const NameForm form, const Environment& env) {
  const Backend& want = env.backend;
  const auto other_major_or_newer = [&] {
    return !want.version || !backend.version || backend.version->major != want.version->major ||
           backend.version->minor > want.version->minor;
  };
  if (backend.kind == BackendKind::kCuda && want.kind == BackendKind::kCuda) {
    if (other_major_or_newer()) return reason::CudaVersion{backend.version, want.version};
  } else if (backend.kind == BackendKind::kRocm && want.kind == BackendKind::kRocm) {
    if (other_major_or_newer()) return reason::RocmVersion{backend.version, want.version, want.version_text};
  } else if (backend != want) {
    return reason::BackendMismatch{backend, want, form};
  } else if (backend.kind == BackendKind::kMetal && (!env.macos || *env.macos < kMetalMinMacos)) {
    return reason::MetalMacos{env.macos};
  }
  return std::nullopt;
}

// The framework check of an arch build (the middle of `_check_variants`' arch branch).
std::optional<Reason> framework_mismatch(const Variant& v, const Environment& env) {
  switch (v.framework) {
    case Framework::kTorch:
      if (!env.torch || v.framework_version != *env.torch) return reason::TorchVersion{v.framework_version, env.torch};
      // The `kernels` package knows the ABI only on Linux (None elsewhere), so an ABI-tagged
      // variant fits only a Linux torch of that ABI.
      if (v.cxx11_abi && env.os != "linux") return reason::CxxAbi{v.cxx11_abi, std::nullopt};
      if (v.cxx11_abi && v.cxx11_abi != env.cxx11_abi) return reason::CxxAbi{v.cxx11_abi, env.cxx11_abi};
      return std::nullopt;
    case Framework::kTorchStableAbi:
      if (!env.torch || v.framework_version > *env.torch) {
        return reason::StableAbiTooNew{v.framework_version, env.torch};
      }
      return std::nullopt;
    case Framework::kTvmFfi:
      if (!env.tvm_ffi || v.framework_version != *env.tvm_ffi) {
        return reason::TvmFfiVersion{v.framework_version, env.tvm_ffi};
      }
      return std::nullopt;
    default: return std::nullopt;
  }
}

// Whether this process can load a variant of this kind at all (loadable.hpp); checked first.
std::optional<Reason> unloadable(const Variant& v, const Loadable& loadable) {
  switch (v.framework) {
    case Framework::kTorch:
    case Framework::kTorchStableAbi:
      if (!loadable.libtorch) return reason::NoLibTorch{};
      return std::nullopt;
    case Framework::kTvmFfi:
      if (!loadable.tvm_ffi) return reason::TvmFfiNotLoadable{};
      return std::nullopt;
    case Framework::kTorchNoarch:
    case Framework::kMlxNoarch:
      if (!loadable.python) return reason::PurePython{};
      return std::nullopt;
    case Framework::kSdk:
      if (!loadable.python) return reason::SdkNotLoadable{};
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

Reason check_variant(const Variant& v, const Environment& env, const Loadable& loadable) {
  if (auto r = unloadable(v, loadable)) return *r;
  if (v.compiled) {
    if (auto r = python_mismatch(v.python, env)) return *r;
    if (auto r = system_mismatch(v, env)) return *r;
  }
  if (v.is_arch()) {
    if (auto r = framework_mismatch(v, env)) return *r;
    if (auto r = backend_mismatch(v.backend, v.form, env)) return *r;
    return reason::Compatible{};
  }
  if (v.is_noarch()) {
    if (v.framework == Framework::kMlxNoarch && !env.mlx) return reason::MlxMissing{};
    if (*v.noarch_backend != env.backend.kind_name() && !v.is_universal()) {
      return reason::NoarchBackend{*v.noarch_backend, env.backend.kind};
    }
    return reason::Compatible{};
  }
  // sdk
  if (v.noarch_backend && *v.noarch_backend != env.backend.kind_name()) {
    return reason::NoarchBackend{*v.noarch_backend, env.backend.kind, /*sdk=*/true};
  }
  if (v.compiled && !v.any_backend) {
    if (auto r = backend_mismatch(v.backend, v.form, env)) return *r;
  }
  return reason::Compatible{};
}

namespace {

// `_sort_variants`' key without its first element (accepted or not); smaller sorts first.
std::array<int, 7> kernels_key(const Variant& v) {
  const int backend_minor = v.backend.versioned() && v.backend.version ? -v.backend.version->minor : 0;
  const int abi = v.python.abi3t ? 1 : 0;
  const int py_major = -v.python.min.major;
  const int py_minor = -v.python.min.minor;
  switch (v.framework) {
    case Framework::kTorchStableAbi:
      return {0, -v.framework_version.major, -v.framework_version.minor, backend_minor, abi, py_major, py_minor};
    case Framework::kTorch: return {1, 0, v.cxx11_abi ? 1 : 0, backend_minor, abi, py_major, py_minor};
    case Framework::kTvmFfi: return {2, 0, 0, backend_minor, abi, py_major, py_minor};
    case Framework::kTorchNoarch:
    case Framework::kMlxNoarch: return {4, 0, 0, v.is_universal() ? 1 : 0, 0, 0, 0};
    case Framework::kSdk:
      if (v.compiled) return {3, 0, 0, v.any_backend ? 1 : backend_minor, abi, py_major, py_minor};
      return {v.noarch_backend ? 5 : 6, 0, 0, 0, 0, 0, 0};
  }
  return {};
}

// The tie-break of select.hpp, where `kernels_key` is equal: explicit form first, then the noarch
// framework the process has.
std::tuple<int, int> tie_key(const Variant& v, const Environment& env) {
  const int legacy = v.form == NameForm::kLegacy ? 1 : 0;
  int framework = 0;
  if (v.framework == Framework::kTorchNoarch) framework = env.torch ? 0 : 1;
  if (v.framework == Framework::kMlxNoarch) framework = env.torch ? 1 : 0;
  return {legacy, framework};
}

}  // namespace

std::vector<Decision> select(const std::vector<std::string>& names, const Environment& env, const Loadable& loadable) {
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
      d.reason = check_variant(*parsed, env, loadable);
    }
    decisions.push_back(std::move(d));
  }
  const auto order = [&](const Decision& d) {
    // Unparsable names last; then `_sort_variants`' key and the tie-break (then the name).
    const bool parsed = d.variant.has_value();
    return std::tuple(!d.accepted(), !parsed, parsed ? kernels_key(*d.variant) : std::array<int, 7>{},
                      parsed ? tie_key(*d.variant, env) : std::tuple<int, int>{});
  };
  std::sort(decisions.begin(), decisions.end(), [&](const Decision& a, const Decision& b) {
    const auto ka = order(a), kb = order(b);
    return ka != kb ? ka < kb : a.name < b.name;
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
    if (d.accepted()) {
      out += d.name + (i == 0 ? " compatible, preferred \u2705" : " compatible \u2705");
      // A GPU fit that could not be checked is said: the choice rests on less than it seems.
      const auto* compatible = std::get_if<reason::Compatible>(&d.reason);
      if (compatible != nullptr && !compatible->fit_not_checked.empty()) {
        out += " (GPU fit not checked: " + compatible->fit_not_checked + ")";
      }
    } else {
      out += d.name + ": " + to_string(d.reason);
    }
    out += "\n";
  }
  return out;
}

}  // namespace kernelhub::resolver
