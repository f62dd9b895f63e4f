#include "kernelhub/load.hpp"

#include <chrono>

#include "kernel_state.hpp"
#include "kernelhub/loader/torch_libraries.hpp"
#include "kernelhub/loader/torch_runtime.hpp"

namespace kernelhub {

Result<resolver::Environment> detect_environment(const EnvironmentSource& env) {
  return resolver::Environment::detect(loader::torch_runtime(), env);
}

Kernel KernelFactory::make(std::shared_ptr<const loader::OpLibrary> library, FetchedVariant fetched,
                           double load_seconds) {
  fetched.timings.load = load_seconds;
  fetched.image.reset();  // what the pre-flight needed of the file; a Kernel keeps no copy of it
  return Kernel(std::make_shared<const Kernel::State>(Kernel::State{std::move(library), std::move(fetched)}));
}

Result<Kernel> load_variant(FetchedVariant fetched, const EnvironmentSource& env) {
  if (!fetched.library) {
    return unexpected(ErrorCode::kNotFound, "variant `" + fetched.variant + "` at `" + fetched.path.string() +
                                                "` has no op library: a C++ process can only load native variants");
  }
  const auto start = std::chrono::steady_clock::now();
  // A CUDA kernel needs torch's CUDA half in the process, as `import torch` would provide it.
  const auto parsed = resolver::Variant::parse(fetched.variant);
  if (fetched.metadata.backend == "cuda" || (parsed && parsed->backend.kind == resolver::BackendKind::kCuda)) {
    KH_RETURN_IF_ERROR(loader::ensure_torch_cuda_loaded());
  }
  const loader::ElfFile* elf = fetched.image ? &fetched.image->elf : nullptr;
  KH_ASSIGN_OR_RETURN(auto library, loader::OpLibrary::open(*fetched.library, fetched.metadata.id, env, elf));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return KernelFactory::make(std::move(library), std::move(fetched), seconds);
}

Result<Kernel> load_kernel(const FetchRequest& request, const FetchContext& ctx) {
  KH_ASSIGN_OR_RETURN(FetchedVariant fetched, fetch_variant(request, ctx));
  return load_variant(std::move(fetched), ctx.env);
}

}  // namespace kernelhub
