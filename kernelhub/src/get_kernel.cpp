// get_kernel and get_local_kernel: configuration read once, fetch, load, errors raised at the edge.
#include <cstdio>
#include <functional>

#include "kernelhub/fetch/local_kernels.hpp"
#include "kernelhub/fetch/raise_for.hpp"
#include "kernelhub/load.hpp"

namespace kernelhub {

namespace {

template <typename T>
T value_or_raise(Result<T> result, std::string_view context = {}) {
  if (!result) raise_for(context.empty() ? result.error() : result.error().with_context(context));
  return *std::move(result);
}

// The load's warnings, those of the kernels it depends on first (they loaded first).
Kernel said(Kernel kernel, const GetKernelOptions& options) {
  const std::function<void(const Kernel&)> say = [&](const Kernel& k) {
    for (const Kernel& dependency : k.dependencies()) say(dependency);
    for (const std::string& warning : k.warnings()) {
      if (options.on_warning) {
        options.on_warning(warning);
      } else {
        std::fprintf(stderr, "kernelhub: warning: %s\n", warning.c_str());
      }
    }
  };
  say(kernel);
  return kernel;
}

FetchContext context_for(const EnvironmentSource& env, const std::optional<std::string>& backend,
                         std::shared_ptr<Session> session = nullptr) {
  auto environment = detect_environment(env);
  if (!environment) raise_for(environment.error());
  return FetchContext{value_or_raise(with_backend(*std::move(environment), backend)), env, std::move(session)};
}

}  // namespace

Kernel get_kernel(std::string_view repo_id, const GetKernelOptions& options) {
  const EnvironmentSource env = process_environment();
  const client::RepoId repo = value_or_raise(client::RepoId::parse(repo_id));
  if (options.revision && options.version) {
    raise_for(Error{ErrorCode::kInvalidArgument,
                    "give either a revision or a version for `" + repo.to_string() + "`, not both"});
  }
  FetchRequest request{repo,
                       options.revision,
                       options.version,
                       options.offline,
                       options.trust_remote_code,
                       options.trusted_repos,
                       options.lockfile,
                       options.require_signature,
                       resolver::Loadable::cpp_process()};
  if (auto local = value_or_raise(local_kernel_dir(repo.to_string(), env))) {
    request.source = *std::move(local);
    const KernelDependency standing_for{repo.to_string(), options.version, options.revision};
    return said(value_or_raise(load_kernel(request, context_for(env, options.backend, options.session), standing_for),
                               "LOCAL_KERNELS entry for `" + repo.to_string() + "`"),
                options);
  }
  return said(value_or_raise(load_kernel(request, context_for(env, options.backend, options.session))), options);
}

Kernel get_local_kernel(const std::filesystem::path& path, std::optional<std::string> backend) {
  const EnvironmentSource env = process_environment();
  FetchRequest request;
  request.source = path;
  return value_or_raise(load_kernel(request, context_for(env, backend)));
}

}  // namespace kernelhub
