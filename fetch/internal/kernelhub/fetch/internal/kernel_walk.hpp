// The depth-first walk over metadata.json `kernel-depends` that both get_kernel's tree
// (kernel_tree.hpp) and `kernelhub download` (tools/kernelhub/dependency_download.hpp) take, so
// that both reach the same kernels in the same order by kernels 0.19.1's rule
// (kernels/_internals/deps.py `resolve_kernel_tree`):
//
//   one kernel      a repo at a version or revision; a kernel reached along two paths (a diamond)
//                   is entered once
//   order           each kernel left after every kernel it depends on; the first one last
//   a cycle         a dependency naming, again, a kernel on the path that led to it (same repo and
//                   same version or revision): kDependencyCycle, the chain in the message
//                   (`a -> b -> a`)
//   an error        of a dependency (not of the first kernel): its code kept, the message prefixed
//                   with the chain that led to it
//
// What is done at each kernel (fetch and verify it, or download it) is the visitor's.
//
// Thread safety: none; one walk at a time per visitor.
#pragma once

#include <cstddef>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/fetch/kernel_dependency.hpp"

namespace kernelhub {

class KernelWalkVisitor {
 public:
  virtual ~KernelWalkVisitor() = default;

  // Gets `kernel` and returns the kernels it depends on, in order. Called once per kernel, before
  // any of them; an error ends the walk.
  virtual Result<std::vector<KernelDependency>> enter(const KernelDependency& kernel) = 0;
  // Once every kernel it depends on has been left. `needed_by`: the kernel it was first reached
  // from (null for the first kernel). `dependencies`: the place of each (in the order of leaving,
  // 0 for the first kernel left), in the order `enter` returned them.
  virtual void leave(const KernelDependency& kernel, const KernelDependency* needed_by,
                     std::vector<std::size_t> dependencies) = 0;
};

// Walks from `kernel`; returns its place in the order of leaving (the number of kernels left
// before it). Errors: the visitor's, each of a dependency prefixed with the chain that led to it,
// and kDependencyCycle (with its Problem, problem.hpp).
Result<std::size_t> walk_kernel_tree(const KernelDependency& kernel, KernelWalkVisitor& visitor);

}  // namespace kernelhub
