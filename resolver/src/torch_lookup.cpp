#include "kernelhub/resolver/internal/torch_lookup.hpp"

#include "kernelhub/resolver/internal/installed_torch.hpp"
#include "kernelhub/resolver/internal/python_environment.hpp"
#include "kernelhub/resolver/internal/torch_spec.hpp"

namespace kernelhub::resolver {

namespace {

constexpr std::string_view kWhatToSet =
    "; set KERNELHUB_TORCH to the torch the kernels are for (2.9, or torch's full version as "
    "torch.__version__ prints it: 2.9.1+cu128), or activate the Python environment that has it";

Result<FoundTorch> find_python_torch(const EnvironmentSource& env) {
  auto python = find_python_environment(env);
  if (!python) {
    return unexpected(python.error().code, "no torch to select variants for: KERNELHUB_TORCH is not set and " +
                                               python.error().message + std::string(kWhatToSet));
  }
  std::string searched;
  for (const auto& dir : python->package_dirs) {
    std::error_code ec;
    if (std::filesystem::exists(dir / "torch" / "version.py", ec)) {
      KH_ASSIGN_OR_RETURN(InstalledTorch torch, read_installed_torch(dir / "torch"));
      return FoundTorch{torch.runtime, torch.dir.string() + " (" + python->found_by + ")", python->runtime};
    }
    searched += (searched.empty() ? "`" : ", `") + dir.string() + "`";
  }
  return unexpected(ErrorCode::kNotFound,
                    "no torch to select variants for: KERNELHUB_TORCH is not set and the Python environment `" +
                        python->prefix.string() + "` (" + python->found_by + ") has no torch" +
                        (searched.empty() ? std::string(" (it has no site-packages)") : " in " + searched) +
                        std::string(kWhatToSet));
}

}  // namespace

Result<FoundTorch> find_torch(const EnvironmentSource& env) {
  KH_ASSIGN_OR_RETURN(const std::optional<TorchSpec> spec, TorchSpec::from_environment(env));
  if (spec) return FoundTorch{spec->runtime(), std::string(env_vars::kKernelhubTorch), std::nullopt};
  return find_python_torch(env);
}

}  // namespace kernelhub::resolver
