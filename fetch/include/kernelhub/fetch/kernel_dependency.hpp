// KernelDependency: one kernel another kernel or a project depends on, as kernels-data spells it
// (config/kernel_deps.rs): `{"repo-id": "org/name", "version": 1}` or `{..., "revision": "main"}`.
// A project lists them (pyproject.toml, kernels.toml, kernels.lock: lockfile.hpp); a variant's
// metadata.json lists its own in `kernel-depends` (metadata.hpp).
//
// Thread safety: a value type.
#pragma once

#include <optional>
#include <string>

namespace kernelhub {

struct KernelDependency {
  std::string repo_id;
  std::optional<int> version;           // a major version: branch v<N>
  std::optional<std::string> revision;  // a branch, tag or commit

  // "v1" or the revision, as get_kernel takes it.
  std::string wanted() const { return version ? "v" + std::to_string(*version) : revision.value_or("main"); }
  // "org/name (version 1)" or "org/name (revision main)", as messages name it.
  std::string describe() const {
    return repo_id + (version ? " (version " + std::to_string(*version) + ")" : " (revision " + wanted() + ")");
  }

  bool operator==(const KernelDependency&) const = default;
};

}  // namespace kernelhub
