#include "kernelhub/internal/load.hpp"

#include <chrono>

#include "kernel_factory.hpp"
#include "kernel_state.hpp"
#include "kernelhub/binary_format/internal/library_image.hpp"
#include "kernelhub/binary_format/internal/torch_libraries.hpp"
#include "kernelhub/fetch/internal/kernel_tree.hpp"
#include "kernelhub/loader/internal/torch_runtime.hpp"

namespace kernelhub {

Result<resolver::Environment> detect_environment(const EnvironmentSource& env) {
  return resolver::Environment::detect(loader::torch_runtime(), env);
}

Kernel KernelFactory::make(std::shared_ptr<const loader::OpLibrary> library, FetchedVariant fetched,
                           double load_seconds, std::vector<Kernel> dependencies) {
  fetched.timings.load = load_seconds;
  fetched.image.reset();  // what the pre-flight needed of the file; a Kernel keeps no copy of it
  return Kernel(std::make_shared<const Kernel::State>(
      Kernel::State{std::move(library), std::move(fetched), std::move(dependencies)}));
}

Result<Kernel> load_variant(FetchedVariant fetched, const EnvironmentSource& env, std::vector<Kernel> dependencies) {
  if (!fetched.library) {
    return unexpected(ErrorCode::kNotFound, "variant `" + fetched.variant + "` at `" + fetched.path.string() +
                                                "` has no op library: a C++ process can only load native variants");
  }
  const auto start = std::chrono::steady_clock::now();
  // A CUDA kernel needs torch's CUDA half in the process, as `import torch` would provide it.
  const auto parsed = resolver::Variant::parse(fetched.variant);
  if (fetched.metadata.backend == "cuda" || (parsed && parsed->backend.kind == resolver::BackendKind::kCuda)) {
    KH_RETURN_IF_ERROR(binary_format::ensure_torch_cuda_loaded());
  }
  const binary_format::ElfFile* elf = fetched.image ? &fetched.image->elf : nullptr;
  KH_ASSIGN_OR_RETURN(auto library, loader::OpLibrary::open(*fetched.library, fetched.metadata.id, env, elf));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return KernelFactory::make(std::move(library), std::move(fetched), seconds, std::move(dependencies));
}

Result<Kernel> load_kernel(const FetchRequest& request, const FetchContext& ctx,
                           std::optional<KernelDependency> standing_for) {
  KH_ASSIGN_OR_RETURN(KernelTree tree, fetch_kernel_tree(request, ctx, std::move(standing_for)));
  // Who needs each kernel, for messages: a dependency's load error names the kernel it was for.
  std::vector<std::string> needed_by(tree.nodes.size());
  for (const auto& node : tree.nodes) {
    for (std::size_t i : node.dependencies) needed_by[i] = node.name;
  }
  std::vector<Kernel> loaded;  // by index in tree.nodes: dependencies come first
  loaded.reserve(tree.nodes.size());
  for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
    KernelTreeNode& node = tree.nodes[i];
    std::vector<Kernel> dependencies;
    for (std::size_t d : node.dependencies) dependencies.push_back(loaded[d]);
    auto kernel = load_variant(std::move(node.fetched), ctx.env, std::move(dependencies));
    if (!kernel && !needed_by[i].empty()) {
      return unexpected(kernel.error().with_context("kernel dependency `" + node.name + "` of `" + needed_by[i] + "`"));
    }
    if (!kernel) return kernel;
    loaded.push_back(*std::move(kernel));
  }
  return loaded.back();
}

}  // namespace kernelhub
