#include <chrono>

#include "kernel_state.hpp"
#include "kernelhub/binary_format/internal/library_image.hpp"
#include "kernelhub/internal/tvm_ffi_load.hpp"

namespace kernelhub::tvm_ffi {

Result<resolver::Environment> detect_environment(const tvm_ffi_loader::Runtime* runtime, const EnvironmentSource& env) {
  // No torch to say which backend: the machine's, as Environment::detect describes it (its driver
  // and GPUs probed, or given whole as KERNELHUB_CUDA_DRIVER and KERNELHUB_GPUS: then no driver is
  // loaded, which on a GPU machine is most of a warm get's time). A driver that sees no GPU runs CPU
  // variants.
  resolver::TorchRuntime machine;
  KH_ASSIGN_OR_RETURN(resolver::Environment environment, resolver::Environment::detect(machine, env));
  if (!env(env_vars::kKernelhubBackend) && environment.cuda_driver && !environment.gpus.empty()) {
    machine.backend = resolver::Backend{resolver::BackendKind::kCuda, environment.cuda_driver};
    KH_ASSIGN_OR_RETURN(environment, resolver::Environment::detect(machine, env));
  }
  if (runtime != nullptr && !env(env_vars::kKernelhubTvmFfi)) environment.tvm_ffi = runtime->version().major_minor();
  return environment;
}

Result<Kernel> load_variant(FetchedVariant fetched, std::shared_ptr<const tvm_ffi_loader::Runtime> runtime,
                            const EnvironmentSource& env) {
  const auto start = std::chrono::steady_clock::now();
  const auto variant = resolver::Variant::parse(fetched.variant);
  if (!variant || variant->framework != resolver::Framework::kTvmFfi) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "variant `" + fetched.variant + "` at `" + fetched.path.string() +
                          "` is not a tvm-ffi build (tvm-ffi<MM>-<backend>-<cpu>-<os>); load torch builds with "
                          "kernelhub::get_kernel (kernelhub/kernelhub.hpp)");
  }
  if (!fetched.library) {
    return unexpected(ErrorCode::kNotFound,
                      "variant `" + fetched.variant + "` at `" + fetched.path.string() + "` has no kernel library");
  }
  const binary_format::ElfFile* elf = fetched.image ? &fetched.image->elf : nullptr;
  KH_ASSIGN_OR_RETURN(auto library,
                      tvm_ffi_loader::KernelLibrary::load(*fetched.library, runtime, variant->framework_version,
                                                          fetched.variant, env, elf));
  fetched.timings.load = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fetched.image.reset();  // what the pre-flight needed of the file; a Kernel keeps no copy of it
  std::string backend(variant->backend.kind_name());
  const std::string version = runtime->version().to_string();
  return Kernel(std::make_shared<const Kernel::State>(
      Kernel::State{std::move(library), std::move(fetched), std::move(backend), version}));
}

}  // namespace kernelhub::tvm_ffi
