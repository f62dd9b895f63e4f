// `kernelhub download` of a kernel's dependencies: the kernels the downloaded variants name in
// metadata.json `kernel-depends`, downloaded into the Hugging Face cache too, recursively, by the
// rule get_kernel loads them with (kernelhub/fetch/internal/kernel_tree.hpp): each at its own version (branch v<N>)
// or revision, with its own variant for the machine (or, when the kernel's download took every
// variant or the whole repo, every variant or the whole repo of each dependency too). As for the
// kernel itself, files are verified against the Hub's hashes as they arrive and no publisher check
// is made (nothing runs); get_kernel makes it at load time.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/client/internal/hub_client.hpp"
#include "kernelhub/fetch/kernel_dependency.hpp"
#include "kernelhub/resolver/environment.hpp"
#include "kernelhub/resolver/loadable.hpp"

namespace kernelhub::cli {

enum class DependencyVariants {
  kSelected,   // the variant `environment` selects
  kAll,        // every variant under build/
  kWholeRepo,  // every file of the repo
};

struct DependencyDownload {
  DependencyVariants variants = DependencyVariants::kSelected;
  std::optional<resolver::Environment> environment;  // needed for kSelected
  bool quiet = true;
  resolver::Loadable loadable = resolver::Loadable::python_process();  // what loads there (kSelected)
};

// The `kernel-depends` of the variant directories in `downloaded` (a whole snapshot's `build/*`
// when a path is a snapshot root), in order, each once.
Result<std::vector<KernelDependency>> dependencies_of(const std::vector<std::filesystem::path>& downloaded);

// Downloads `needed` (the dependencies of `kernel`, as it was asked for) and theirs; returns one
// object per kernel, dependencies first: {"repo", "revision", "commit", "variants", "paths",
// "needed_by", "downloaded_bytes", "requests"}. Errors: the client's, kNoCompatibleVariant,
// kDependencyCycle naming the chain, and each prefixed with the chain that led to it.
Result<nlohmann::json> download_dependencies(const KernelDependency& kernel,
                                             const std::vector<KernelDependency>& needed,
                                             const DependencyDownload& request, const client::HubClient& hub);

}  // namespace kernelhub::cli
