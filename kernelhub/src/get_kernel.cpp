// get_kernel and get_local_kernel: configuration read once, fetch, load, errors raised at the edge.
#include <functional>

#include "kernelhub/fetch/internal/local_kernels.hpp"
#include "kernelhub/fetch/internal/raise_for.hpp"
#include "kernelhub/internal/load.hpp"

namespace kernelhub {

namespace {

template <typename T>
T value_or_raise(Result<T> result) {
  if (!result) raise_for(result.error());
  return *std::move(result);
}

// The load's warnings, those of the kernels it depends on first (they loaded first).
Kernel said(Kernel kernel, const GetKernelOptions& options) {
  const std::function<void(const Kernel&)> say = [&](const Kernel& k) {
    for (const Kernel& dependency : k.dependencies()) say(dependency);
    say_warnings(k.warnings(), options);
  };
  say(kernel);
  return kernel;
}

Result<FetchContext> context_for(const EnvironmentSource& env, const std::optional<std::string>& backend,
                                 std::shared_ptr<Session> session = nullptr, client::ProgressSink* progress = nullptr) {
  KH_ASSIGN_OR_RETURN(resolver::Environment environment, detect_environment(env));
  KH_ASSIGN_OR_RETURN(environment, with_backend(std::move(environment), backend));
  return FetchContext{std::move(environment), env, std::move(session), progress};
}

}  // namespace

Result<Kernel> get_kernel_result(std::string_view repo_id, const GetKernelOptions& options,
                                 const EnvironmentSource& env, std::shared_ptr<Session> session) {
  KH_ASSIGN_OR_RETURN(const client::RepoId repo, client::RepoId::parse(repo_id));
  if (options.revision && options.version) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "give either a revision or a version for `" + repo.to_string() + "`, not both");
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
  KH_ASSIGN_OR_RETURN(auto local, local_kernel_dir(repo.to_string(), env));
  KH_ASSIGN_OR_RETURN(const FetchContext ctx, context_for(env, options.backend, std::move(session), options.progress));
  if (local) {
    request.source = *std::move(local);
    const KernelDependency standing_for{repo.to_string(), options.version, options.revision};
    auto kernel = load_kernel(request, ctx, standing_for);
    if (!kernel) return unexpected(kernel.error().with_context("LOCAL_KERNELS entry for `" + repo.to_string() + "`"));
    return said(*std::move(kernel), options);
  }
  KH_ASSIGN_OR_RETURN(Kernel kernel, load_kernel(request, ctx));
  return said(std::move(kernel), options);
}

Kernel get_kernel(std::string_view repo_id, const GetKernelOptions& options, const EnvironmentSource& env,
                  std::shared_ptr<Session> session) {
  return value_or_raise(get_kernel_result(repo_id, options, env, std::move(session)));
}

Kernel get_kernel(std::string_view repo_id, const GetKernelOptions& options) {
  return get_kernel(repo_id, options, process_environment());
}

Kernel get_local_kernel(const std::filesystem::path& path, std::optional<std::string> backend) {
  const EnvironmentSource env = process_environment();
  FetchRequest request;
  request.source = path;
  return value_or_raise(load_kernel(request, value_or_raise(context_for(env, backend))));
}

}  // namespace kernelhub
