#include "kernelhub/client/internal/settings.hpp"

#include <sys/utsname.h>

#include <cctype>
#include <charconv>
#include <fstream>
#include <sstream>

#include "kernelhub/base/environment_variables.hpp"
#include "kernelhub/base/internal/boolean_variable.hpp"

namespace kernelhub::client {

std::string Token::to_string() const {
  if (value_.size() <= 8) return "***";
  return value_.substr(0, 3) + "…" + value_.substr(value_.size() - 4);
}

namespace {

// `~` and `~/x` expanded with $HOME, as Python's os.path.expanduser does.
std::filesystem::path expand_user(const std::string& text, const EnvironmentSource& env) {
  if (text == "~" || text.starts_with("~/")) {
    const std::string home = env(env_vars::kHome).value_or("/");
    return std::filesystem::path(home + text.substr(1));
  }
  return std::filesystem::path(text);
}

Result<std::chrono::milliseconds> seconds_var(const EnvironmentSource& env, std::string_view name,
                                              std::chrono::milliseconds fallback) {
  const auto value = env(name);
  if (!value) return fallback;
  // huggingface_hub parses these with int(); we also accept a fraction ("0.5").
  double seconds = 0;
  std::istringstream in(*value);
  if (!(in >> seconds) || !in.eof() || seconds <= 0) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "`" + std::string(name) + "=" + *value + "` is not a positive number of seconds");
  }
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

// A whole number from `low` to `high` in variable `name`, into `out` when set.
Status read_count(const EnvironmentSource& env, std::string_view name, int low, int high, int& out) {
  const auto value = env(name);
  if (!value) return {};
  int n = 0;
  const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
  if (ec != std::errc() || end != value->data() + value->size() || n < low || n > high) {
    return unexpected(ErrorCode::kInvalidArgument, "`" + std::string(name) + "=" + *value + "` is not a number from " +
                                                       std::to_string(low) + " to " + std::to_string(high));
  }
  out = n;
  return {};
}

std::string trim_token(std::string text) {
  std::string out;
  for (char c : text) {
    if (c != '\r' && c != '\n') out.push_back(c);
  }
  const auto first = out.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  const auto last = out.find_last_not_of(" \t");
  return out.substr(first, last - first + 1);
}

}  // namespace

Result<Settings> Settings::from_env(const EnvironmentSource& env) {
  Settings s;
  KH_ASSIGN_OR_RETURN(s.clock, clock_from(env));
  // HF_HOME: $HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface.
  if (auto v = env(env_vars::kHfHome)) {
    s.hf_home = expand_user(*v, env);
  } else if (auto xdg = env(env_vars::kXdgCacheHome)) {
    s.hf_home = expand_user(*xdg, env) / "huggingface";
  } else {
    s.hf_home = expand_user("~/.cache/huggingface", env);
  }
  if (auto v = env(env_vars::kHfHubCache)) {
    s.hub_cache = expand_user(*v, env);
  } else if (auto legacy = env(env_vars::kHuggingfaceHubCache)) {
    s.hub_cache = expand_user(*legacy, env);
  } else {
    s.hub_cache = s.hf_home / "hub";
  }
  if (auto v = env(env_vars::kKernelsCache)) s.kernels_cache = expand_user(*v, env);

  if (auto v = env(env_vars::kHfEndpoint)) {
    std::string endpoint = *v;
    while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
    if (!endpoint.starts_with("http://") && !endpoint.starts_with("https://")) {
      return unexpected(ErrorCode::kInvalidArgument,
                        "`HF_ENDPOINT=" + *v + "` is not an http(s) URL (expected e.g. https://huggingface.co)");
    }
    s.endpoint = endpoint;
  }

  if (!is_truthy(env(env_vars::kHfHubDisableImplicitToken))) {
    if (auto v = env(env_vars::kHfToken)) {
      s.token = Token(trim_token(*v));
    } else if (auto legacy = env(env_vars::kHuggingFaceHubToken)) {
      s.token = Token(trim_token(*legacy));
    } else {
      const std::filesystem::path file =
          env(env_vars::kHfTokenPath) ? expand_user(*env(env_vars::kHfTokenPath), env) : s.hf_home / "token";
      std::ifstream in(file);
      if (in) {
        std::stringstream content;
        content << in.rdbuf();
        std::string token = trim_token(content.str());
        if (!token.empty()) s.token = Token(std::move(token));
      }
    }
    if (s.token && s.token->value().empty()) s.token.reset();
  }

  s.offline = is_truthy(env(env_vars::kHfHubOffline)) || is_truthy(env(env_vars::kTransformersOffline));
  s.disable_telemetry = is_truthy(env(env_vars::kHfHubDisableTelemetry)) ||
                        is_truthy(env(env_vars::kDisableTelemetry)) || is_truthy(env(env_vars::kDoNotTrack));
  s.user_agent_origin = env(env_vars::kHfHubUserAgentOrigin).value_or("");

  KH_ASSIGN_OR_RETURN(s.api_timeout, seconds_var(env, env_vars::kHfHubEtagTimeout, s.api_timeout));
  KH_ASSIGN_OR_RETURN(s.read_timeout, seconds_var(env, env_vars::kHfHubDownloadTimeout, s.read_timeout));
  KH_ASSIGN_OR_RETURN(s.connect_timeout, seconds_var(env, env_vars::kKernelhubConnectTimeout, s.connect_timeout));
  s.fsync = flag_or(env(env_vars::kKernelhubFsync), s.fsync);
  KH_RETURN_IF_ERROR(read_count(env, env_vars::kKernelhubHashThreads, 0, 64, s.hash_threads));
  KH_RETURN_IF_ERROR(read_count(env, env_vars::kKernelhubTransferThreads, 1, 64, s.transfer_threads));
  KH_RETURN_IF_ERROR(read_count(env, env_vars::kKernelhubMaxParallel, 1, 256, s.max_parallel));
  return s;
}

const std::filesystem::path& Settings::cache_dir(RepoType type) const {
  if (type == RepoType::kKernel && kernels_cache) return *kernels_cache;
  return hub_cache;
}

std::string Settings::user_agent() const {
#ifdef KERNELHUB_VERSION
  std::string agent = "kernelhub/" KERNELHUB_VERSION;
#else
  std::string agent = "kernelhub/0.1.0";
#endif
  if (!disable_telemetry) {
    utsname names{};
    if (uname(&names) == 0) {
      std::string os = names.sysname;
      for (char& c : os) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      agent += "; os/" + os + "; arch/" + std::string(names.machine);
    }
  }
  if (!user_agent_origin.empty()) agent += "; origin/" + user_agent_origin;
  return agent;
}

}  // namespace kernelhub::client
