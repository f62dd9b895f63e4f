#include "kernelhub/resolver/internal/torch_spec.hpp"

#include "kernelhub/base/environment_variables.hpp"
#include "kernelhub/resolver/internal/torch_version_info.hpp"

namespace kernelhub::resolver {

Result<TorchSpec> TorchSpec::parse(std::string_view text) {
  const std::size_t plus = text.find('+');
  const std::string_view version_text = text.substr(0, plus);
  auto version = Version::parse(version_text);
  // After major.minor only a patch (and what follows it, as in 2.10.0a0) may come.
  const std::size_t read = version ? version->to_string().size() : 0;
  if (!version || (read < version_text.size() && version_text[read] != '.')) {
    return unexpected(ErrorCode::kInvalidArgument, "`" + std::string(text) +
                                                       "` is not a torch version; expected MAJOR.MINOR[+BACKEND], "
                                                       "e.g. 2.9 or 2.9.1+cu128");
  }
  TorchSpec spec{*version, std::nullopt};
  if (plus == std::string_view::npos) return spec;
  const std::string_view label = text.substr(plus + 1);
  auto backend = Backend::parse_environment(label);
  if (!backend) backend = Backend::parse_token(label);
  if (!backend) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "`" + std::string(text) + "`: `" + std::string(label) +
                          "` is not a backend; expected torch's label (cpu, cu128, rocm6.4) or cuda12.8, rocm7.1, "
                          "xpu2025.3, metal, ...");
  }
  spec.backend = *backend;
  return spec;
}

Result<std::optional<TorchSpec>> TorchSpec::from_environment(const EnvironmentSource& env) {
  const auto text = env(env_vars::kKernelhubTorch);
  if (!text) return std::optional<TorchSpec>();
  auto spec = parse(*text);
  if (!spec) return unexpected(spec.error().code, std::string(env_vars::kKernelhubTorch) + "=" + spec.error().message);
  return std::optional<TorchSpec>(*spec);
}

std::string TorchSpec::to_string() const {
  return version.to_string() + (backend ? "+" + backend->to_environment() : std::string());
}

TorchRuntime TorchSpec::runtime() const {
  return TorchRuntime{version, wheels_use_cxx11_abi(version), backend.value_or(Backend{})};
}

}  // namespace kernelhub::resolver
