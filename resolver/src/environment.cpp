#include "kernelhub/resolver/environment.hpp"

#include <gnu/libc-version.h>
#include <sys/utsname.h>

#include <charconv>

#include "kernelhub/resolver/internal/cuda_probe.hpp"
#include "kernelhub/resolver/internal/torch_spec.hpp"

namespace kernelhub::resolver {

namespace {

Unexpected bad_override(std::string_view name, std::string_view value, std::string_view expected) {
  return unexpected(ErrorCode::kInvalidArgument, std::string(name) + "=`" + std::string(value) +
                                                     "` does not parse; expected " + std::string(expected));
}

std::string normalise_cpu(std::string cpu) {
  if (cpu == "arm64") return "aarch64";
  if (cpu == "AMD64" || cpu == "amd64") return "x86_64";
  return cpu;
}

void choose_backend(Environment& env) {
  env.backend = env.torch_backend;
  env.backend_reason.clear();
  if (env.torch_backend.kind == BackendKind::kCuda && !env.cuda_driver) {
    env.backend = Backend{BackendKind::kCpu, {}};
    env.backend_reason = "torch is built with CUDA " +
                         (env.torch_backend.version ? env.torch_backend.version->to_string() : std::string("?")) +
                         " but no CUDA driver was found, so CPU variants are selected";
  }
}

}  // namespace

Result<ComputeCapability> ComputeCapability::parse(std::string_view text) {
  auto v = Version::parse(text);
  if (!v) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "`" + std::string(text) + "` is not a compute capability; expected e.g. 9.0");
  }
  return ComputeCapability{v->major, v->minor};
}

std::string ComputeCapability::to_string() const {
  return std::to_string(major) + "." + std::to_string(minor);
}

void Environment::set_python(const std::optional<PythonRuntime>& runtime) {
  python = runtime ? std::optional(runtime->version) : std::nullopt;
  python_free_threaded = runtime && runtime->free_threaded;
  mlx = runtime && runtime->mlx;
  tvm_ffi = runtime ? runtime->tvm_ffi : std::nullopt;
}

Result<Environment> Environment::detect(const TorchRuntime& torch, const EnvironmentSource& env,
                                        const std::optional<PythonRuntime>& python) {
  Environment e;
  utsname name{};
  if (uname(&name) == 0) {
    std::string sys = name.sysname;
    for (char& c : sys) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    e.os = sys;
    e.cpu = normalise_cpu(name.machine);
  }
  if (auto glibc = Version::parse(gnu_get_libc_version())) e.glibc = *glibc;
  e.torch = torch.version;
  e.cxx11_abi = torch.cxx11_abi;
  e.torch_backend = torch.backend;
  e.set_python(python);
  // An explicit GPU list skips the driver probe (and its child process) entirely.
  if (!env(env_vars::kKernelhubGpus) || !env(env_vars::kKernelhubCudaDriver)) {
    const CudaProbe& probe = probe_cuda_once(env);
    e.cuda_driver = probe.driver;
    e.gpus = probe.gpus;
  }
  KH_RETURN_IF_ERROR(e.apply_overrides(env));
  return e;
}

Status Environment::apply_overrides(const EnvironmentSource& env) {
  if (auto v = env(env_vars::kKernelhubOs)) os = *v;
  if (auto v = env(env_vars::kKernelhubCpu)) cpu = normalise_cpu(*v);
  if (auto v = env(env_vars::kKernelhubGlibc)) {
    auto parsed = Version::parse(*v);
    if (!parsed) return bad_override(env_vars::kKernelhubGlibc, *v, "MAJOR.MINOR, e.g. 2.28");
    glibc = *parsed;
  }
  if (auto v = env(env_vars::kKernelhubPython)) {
    std::string text = *v;
    python_free_threaded = !text.empty() && text.back() == 't';
    if (python_free_threaded) text.pop_back();
    auto parsed = Version::parse(text);
    if (!parsed) return bad_override(env_vars::kKernelhubPython, *v, "MAJOR.MINOR, e.g. 3.12 (3.13t: free-threaded)");
    python = *parsed;
  }
  std::optional<std::string> target_torch;  // a torch built for an accelerator, named explicitly
  KH_ASSIGN_OR_RETURN(const std::optional<TorchSpec> spec, TorchSpec::from_environment(env));
  if (spec) {
    torch = spec->version;
    if (spec->backend) {
      torch_backend = *spec->backend;
      if (spec->backend->kind != BackendKind::kCpu) target_torch = *env(env_vars::kKernelhubTorch);
    }
  }
  if (auto v = env(env_vars::kKernelhubCxx11Abi)) {
    if (*v != "0" && *v != "1") return bad_override(env_vars::kKernelhubCxx11Abi, *v, "0 or 1");
    cxx11_abi = *v == "1";
  }
  if (auto v = env(env_vars::kKernelhubTvmFfi)) {
    auto parsed = Version::parse(*v);
    if (!parsed && !v->empty())
      return bad_override(env_vars::kKernelhubTvmFfi, *v, "MAJOR.MINOR, e.g. 0.1 (empty: none)");
    tvm_ffi = parsed ? std::optional(*parsed) : std::nullopt;
  }
  if (auto v = env(env_vars::kKernelhubMlx)) {
    if (*v != "0" && *v != "1") return bad_override(env_vars::kKernelhubMlx, *v, "0 or 1");
    mlx = *v == "1";
  }
  if (auto v = env(env_vars::kKernelhubMacos)) {
    auto parsed = Version::parse(*v);
    if (!parsed) return bad_override(env_vars::kKernelhubMacos, *v, "MAJOR.MINOR, e.g. 26.1");
    macos = *parsed;
  }
  if (auto v = env(env_vars::kKernelhubCudaDriver)) {
    auto parsed = Version::parse(*v);
    if (!parsed && !v->empty() && *v != "none") {
      return bad_override(env_vars::kKernelhubCudaDriver, *v, "MAJOR.MINOR, e.g. 13.0 (none: no driver)");
    }
    cuda_driver = parsed ? std::optional(*parsed) : std::nullopt;
  }
  if (auto v = env(env_vars::kKernelhubGpus)) {
    gpus.clear();
    std::string_view rest = *v;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      auto cc = ComputeCapability::parse(item);
      if (!cc)
        return bad_override(env_vars::kKernelhubGpus, *v, "compute capabilities separated by commas, e.g. 9.0,8.0");
      gpus.push_back(*cc);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  if (auto v = env(env_vars::kKernelhubBackend)) {
    auto parsed = Backend::parse_environment(*v);
    if (!parsed) return bad_override(env_vars::kKernelhubBackend, *v, "cpu, cuda12.8, rocm7.1, xpu2025.3, metal, ...");
    torch_backend = *parsed;
    // An explicit backend is what the user wants selected, driver or not.
    backend = *parsed;
    backend_reason = "set by KERNELHUB_BACKEND";
    return {};
  }
  if (target_torch && !env(env_vars::kKernelhubCudaDriver)) {
    // A torch build named explicitly (a login node preparing a cache for GPU nodes, an image
    // build stage) is the target machine's, not this one's: its backend is selected whatever this
    // machine has, and this machine's driver and GPUs say nothing about the target's. (With the
    // target's driver named too, KERNELHUB_CUDA_DRIVER, the target is described whole and its
    // backend chosen as on any machine: no driver, CPU variants.)
    cuda_driver.reset();
    if (!env(env_vars::kKernelhubGpus)) gpus.clear();
    backend = torch_backend;
    backend_reason = "torch " + *target_torch + " (KERNELHUB_TORCH or --torch) names the target machine, so its " +
                     torch_backend.to_token() + " variants are selected whatever this machine has; " +
                     (gpus.empty() ? "the GPU fit is skipped (give the target's GPUs as KERNELHUB_GPUS, e.g. 9.0, "
                                     "to fit them)"
                                   : "the GPU fit checks KERNELHUB_GPUS");
    return {};
  }
  choose_backend(*this);
  return {};
}

std::optional<Variant> Environment::native_variant() const {
  if (!torch) return std::nullopt;
  Variant v;
  v.framework = Framework::kTorch;
  v.framework_version = *torch;
  if (os == "linux") v.cxx11_abi = cxx11_abi.value_or(true);
  v.backend = backend;
  v.cpu = cpu;
  v.os = os;
  return v;
}

}  // namespace kernelhub::resolver
