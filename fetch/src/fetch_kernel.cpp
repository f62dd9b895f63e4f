// fetch_kernel (fetch_kernel.hpp): configuration read once, the fetch, errors raised at the edge.
#include "kernelhub/fetch/fetch_kernel.hpp"

#include <cstdio>
#include <memory>

#include "kernelhub/fetch/internal/fetch.hpp"
#include "kernelhub/fetch/internal/local_kernels.hpp"
#include "kernelhub/fetch/internal/raise_for.hpp"

namespace kernelhub {

namespace {

// A FetchedKernel is made by what fetched it; this one loaded nothing on top.
struct FetchedOnly : FetchedKernel {
  explicit FetchedOnly(std::shared_ptr<const FetchedVariant> fetched) : FetchedKernel(std::move(fetched)) {}
};

Result<FetchedVariant> fetch_for(std::string_view repo_id, const resolver::Environment& environment,
                                 const resolver::Loadable& loadable, const GetKernelOptions& options,
                                 const EnvironmentSource& env) {
  KH_ASSIGN_OR_RETURN(const FetchRequest request, fetch_request(repo_id, options, loadable, env));
  KH_ASSIGN_OR_RETURN(resolver::Environment selected, with_backend(environment, options.backend));
  auto fetched = fetch_variant(request, FetchContext{std::move(selected), env, nullptr, options.progress});
  if (!fetched && std::holds_alternative<std::filesystem::path>(request.source)) {
    return unexpected(fetched.error().with_context("LOCAL_KERNELS entry for `" + std::string(repo_id) + "`"));
  }
  return fetched;
}

}  // namespace

Result<FetchRequest> fetch_request(std::string_view repo_id, const GetKernelOptions& options,
                                   const resolver::Loadable& loadable, const EnvironmentSource& env) {
  KH_ASSIGN_OR_RETURN(const client::RepoId repo, client::RepoId::parse(repo_id));
  if (options.revision && options.version) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "give either a revision or a version for `" + repo.to_string() + "`, not both");
  }
  FetchRequest request;
  request.source = repo;
  request.revision = options.revision;
  request.version = options.version;
  request.offline = options.offline;
  request.trust_remote_code = options.trust_remote_code;
  request.trusted_repos = options.trusted_repos;
  request.lockfile = options.lockfile;
  request.require_signature = options.require_signature;
  request.loadable = loadable;
  KH_ASSIGN_OR_RETURN(auto local, local_kernel_dir(repo.to_string(), env));
  if (local) request.source = *std::move(local);
  return request;
}

void say_warnings(const std::vector<std::string>& warnings, const GetKernelOptions& options) {
  for (const std::string& warning : warnings) {
    if (options.on_warning) {
      options.on_warning(warning);
    } else {
      std::fprintf(stderr, "kernelhub: warning: %s\n", warning.c_str());
    }
  }
}

FetchedKernel fetch_kernel(std::string_view repo_id, const resolver::Environment& environment,
                           const resolver::Loadable& loadable, const GetKernelOptions& options) {
  auto fetched = fetch_for(repo_id, environment, loadable, options, process_environment());
  if (!fetched) raise_for(fetched.error());
  const FetchedOnly kernel(std::make_shared<const FetchedVariant>(*std::move(fetched)));
  say_warnings(kernel.warnings(), options);
  return kernel;
}

}  // namespace kernelhub
