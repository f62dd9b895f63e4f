// A kernel and the kernels it depends on (metadata.json `kernel-depends`), fetched and verified,
// each before the kernels that need it. The rule is kernels 0.19.1's (kernels/_internals/deps.py
// `resolve_kernel_tree` with the resolvers of load.py), applied by the same fetch as the kernel:
//
//   which repo      the dependency's `repo-id`; a LOCAL_KERNELS entry for it wins, as it does for
//                   the kernel itself
//   which commit    its `version` (branch v<N>) or `revision`, resolved on the Hub (the cache only
//                   when offline); under a lock file, the commit the lock records for exactly that
//                   repo and version or revision (kernels keys lock entries by both)
//   which variant   the dependency's own best variant for this machine and the same backend, chosen
//                   by the same rules as the kernel's (not the variant name of the kernel that
//                   depends on it)
//   which checks    the kernel's: publisher trust, signature, lock hashes, metadata.json digest
//
// A dependency that names, again, a kernel on the path that led to it (same repo and same version
// or revision) is a cycle: kDependencyCycle, the chain in the message (`a -> b -> a`). A dependency
// that cannot be fetched keeps its error's code, the message prefixed with the chain that led to
// it. A kernel reached along two paths (a diamond) is fetched once and appears once.
//
// Thread safety: as fetch_variant.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "kernelhub/fetch/internal/fetch.hpp"
#include "kernelhub/fetch/kernel_dependency.hpp"

namespace kernelhub {

struct KernelTreeNode {
  std::string name;                       // the repo id, or the directory of a local kernel
  KernelDependency wanted;                // what asked for it: the request, or a `kernel-depends` entry
  FetchedVariant fetched;                 // downloaded and verified (metadata only with metadata_only)
  std::vector<std::size_t> dependencies;  // indices into KernelTree::nodes, in metadata.json's order
};

struct KernelTree {
  // Every kernel after all the kernels it depends on; the one asked for last.
  std::vector<KernelTreeNode> nodes;

  const KernelTreeNode& root() const { return nodes.back(); }
};

// The kernel of `request` (whose source the caller chose: a Hub repo or a directory) and every
// kernel it depends on, recursively. Dependencies are fetched with the request's options (offline,
// trust, lock file, signatures, loadable, metadata_only, check order). `standing_for`: the repo,
// version or revision a directory source was chosen for (LOCAL_KERNELS), so that a dependency
// naming that repo again is seen as the cycle it is. Errors: those of fetch_variant,
// kDependencyCycle, and those of LOCAL_KERNELS.
Result<KernelTree> fetch_kernel_tree(const FetchRequest& request, const FetchContext& ctx,
                                     std::optional<KernelDependency> standing_for = std::nullopt);

}  // namespace kernelhub
