// get_kernel and get_local_kernel: configuration read once, fetch, load, errors raised at the edge.
#include <cstdio>
#include <functional>

#include "kernelhub/fetch/local_kernels.hpp"
#include "kernelhub/fetch/raise_for.hpp"
#include "kernelhub/load.hpp"

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

Result<FetchContext> context_for(const EnvironmentSource& env, const std::optional<std::string>& backend,
                                 std::shared_ptr<Session> session = nullptr, client::ProgressSink* progress = nullptr) {
  KH_ASSIGN_OR_RETURN(resolver::Environment environment, detect_environment(env));
  KH_ASSIGN_OR_RETURN(environment, with_backend(std::move(environment), backend));
  return FetchContext{std::move(environment), env, std::move(session), progress};
}

}  // namespace

Result<Kernel> get_kernel_result(std::string_view repo_id, const GetKernelOptions& options) {
  const EnvironmentSource env = process_environment();
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
  KH_ASSIGN_OR_RETURN(const FetchContext ctx, context_for(env, options.backend, options.session, options.progress));
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

Kernel get_kernel(std::string_view repo_id, const GetKernelOptions& options) {
  return value_or_raise(get_kernel_result(repo_id, options));
}

Kernel get_local_kernel(const std::filesystem::path& path, std::optional<std::string> backend) {
  const EnvironmentSource env = process_environment();
  FetchRequest request;
  request.source = path;
  return value_or_raise(load_kernel(request, value_or_raise(context_for(env, backend))));
}

}  // namespace kernelhub
