// tvm_ffi::get_kernel and get_local_kernel: configuration read once, the runtime, fetch, load,
// errors raised at the edge. Mirrors kernelhub/src/get_kernel.cpp with the selection of a process
// that loads tvm-ffi builds only.
#include "kernelhub/fetch/internal/raise_for.hpp"
#include "kernelhub/internal/tvm_ffi_load.hpp"

namespace kernelhub::tvm_ffi {

namespace {

template <typename T>
T value_or_raise(Result<T> result, std::string_view context = {}) {
  if (!result) raise_for(context.empty() ? result.error() : result.error().with_context(context));
  return *std::move(result);
}

FetchContext context_for(const tvm_ffi_loader::Runtime& runtime, const EnvironmentSource& env,
                         const GetKernelOptions& options) {
  auto environment = value_or_raise(detect_environment(&runtime, env));
  return FetchContext{value_or_raise(with_backend(std::move(environment), options.backend)), env, nullptr,
                      options.progress};
}

FetchRequest tvm_ffi_request() {
  FetchRequest request;
  request.loadable = resolver::Loadable::torch_free_process();
  return request;
}

Kernel fetch_and_load(const FetchRequest& request, const EnvironmentSource& env, const GetKernelOptions& options,
                      std::string_view context = {}) {
  auto runtime = value_or_raise(tvm_ffi_loader::Runtime::of_process(env));
  const FetchContext ctx = context_for(*runtime, env, options);
  FetchedVariant fetched = value_or_raise(fetch_variant(request, ctx), context);
  return value_or_raise(load_variant(std::move(fetched), std::move(runtime), env), context);
}

}  // namespace

Result<FetchRequest> fetch_request(std::string_view repo_id, const GetKernelOptions& options,
                                   const EnvironmentSource& env) {
  return kernelhub::fetch_request(repo_id, options, resolver::Loadable::torch_free_process(), env);
}

Kernel get_kernel(std::string_view repo_id, const GetKernelOptions& options) {
  const EnvironmentSource env = process_environment();
  const FetchRequest request = value_or_raise(fetch_request(repo_id, options, env));
  const bool local = std::holds_alternative<std::filesystem::path>(request.source);
  Kernel kernel =
      fetch_and_load(request, env, options, local ? "LOCAL_KERNELS entry for `" + std::string(repo_id) + "`" : "");
  say_warnings(kernel.warnings(), options);
  return kernel;
}

Kernel get_local_kernel(const std::filesystem::path& path, std::optional<std::string> backend) {
  const EnvironmentSource env = process_environment();
  FetchRequest request = tvm_ffi_request();
  request.source = path;
  return fetch_and_load(request, env, GetKernelOptions{.backend = std::move(backend)});
}

}  // namespace kernelhub::tvm_ffi
