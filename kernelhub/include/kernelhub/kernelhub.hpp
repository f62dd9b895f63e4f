// kernelhub: get GPU kernels from a Hub into a running C++ program.
//
//   auto kernel = kernelhub::get_kernel("kernelhub/reference-kernels", {.version = 1});
//   auto rms_norm = kernel.op<void(at::Tensor&, const at::Tensor&, const at::Tensor&, double)>("rms_norm");
//   rms_norm.call(out, x, weight, 1e-6);
//
// get_kernel detects this machine (resolver::Environment), picks the variant that runs here
// (resolver::select, whose full trace the error carries when nothing fits), verifies its files
// against metadata.json `digest`, checks the library can load (loader pre-flight) and loads it.
// Errors are thrown as the exception classes of kernelhub/errors.hpp.
//
// Configuration is read once per call from the process environment: LOCAL_KERNELS, the
// KERNELHUB_* overrides (resolver/environment.hpp), and the Hugging Face variables (HF_ENDPOINT,
// HF_TOKEN, HF_HOME/HF_HUB_CACHE/KERNELS_CACHE, HF_HUB_OFFLINE; client/settings.hpp).
// Thread safety: get_kernel may be called from several threads; loads are serialised.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/client/repo_id.hpp"
#include "kernelhub/errors.hpp"
#include "kernelhub/kernel.hpp"
#include "kernelhub/resolver/environment.hpp"

namespace kernelhub {

struct GetKernelOptions {
  std::optional<std::string> revision;  // branch, tag or commit
  std::optional<int> version;           // major version: branch v<N>
  std::optional<std::string> backend;   // "cpu" or the detected backend, as in the kernels package
  bool offline = false;                 // also HF_HUB_OFFLINE
  // Trust, as in the kernels package: without it, only repos whose org the Hub marks as a
  // trusted kernel publisher load (checked online; offline, what is cached was trusted when it
  // was downloaded). `trusted_repos` allows individual repos; KERNELHUB_TRUSTED (comma-separated
  // orgs or org/name repos) is the allowlist for sites whose Hub has no publisher flag.
  bool trust_remote_code = false;
  std::vector<std::string> trusted_repos;
  // A kernels.lock (lockfile.hpp): the repo loads at its locked commit, with no API request
  // when it is cached, and the variant's `git_lfs_concat` hash is checked when the lock has one.
  std::optional<std::filesystem::path> lockfile;
  // Selecting for a Python process (the Python shim), which imports the variant as a module:
  // pure-Python variants (torch-universal, noarch) qualify, as in the kernels package, and a
  // variant needs no op library. A C++ process can only dlopen native variants.
  bool for_python = false;
  // Signatures (docs/SIGNING.md): a variant is verified whenever a key is trusted for its repo or
  // org (KERNELHUB_TRUSTED_KEYS, ~/.config/kernelhub/trusted_keys); this also refuses unsigned
  // variants of repos with no trusted key (also KERNELHUB_REQUIRE_SIGNATURE=1).
  bool require_signature = false;
};

// A variant on disk, downloaded and verified (metadata.json digest, lock hash) but not loaded:
// what get_kernel dlopens, and what the Python shim imports as a module.
struct FetchedVariant {
  std::filesystem::path path;                 // the variant directory
  std::string variant;                        // its name, e.g. torch215-cxx11-cpu-x86_64-linux
  std::string revision;                       // the commit, or "local"
  Metadata metadata;                          // from metadata.json (or the namespace from _ops.py)
  std::vector<resolver::Decision> decisions;  // best first; empty for a variant directory
  LoadTimings timings;                        // resolve, download, verify (load is 0)
};

// The environment as get_kernel sees it: this process's LibTorch and machine, plus overrides.
resolver::Environment detect_environment(const EnvironmentSource& env = process_environment());

// Loads `repo_id`, from LOCAL_KERNELS when it names the repo. Throws (errors.hpp).
Kernel get_kernel(std::string_view repo_id, const GetKernelOptions& options = {});

// Loads the best variant under a local directory: `path/<variant>/`, `path/build/<variant>/`,
// or `path` itself when it is a variant directory. Throws (errors.hpp).
Kernel get_local_kernel(const std::filesystem::path& path, std::optional<std::string> backend = std::nullopt);

// A decision trace: every variant of a repo or directory, best first, for this environment,
// with the GPU fit applied when there are GPUs (resolver/gpu_fit_step.hpp).
struct VariantDecisions {
  std::string revision;                       // as asked ("v1", a branch, "local")
  std::string commit;                         // the resolved commit; empty for a directory
  std::filesystem::path root;                 // for a directory: where the variant folders are
  std::vector<resolver::Decision> decisions;  // best first
};

// Network (refs, tree, and metadata.json of CUDA candidates when there are GPUs) unless offline.
// Errors: those of client::HubClient, kInvalidArgument when neither revision nor version is given.
Result<VariantDecisions> hub_variant_decisions(const client::RepoId& repo, const GetKernelOptions& options,
                                               const resolver::Environment& environment, const EnvironmentSource& env,
                                               const resolver::SelectOptions& select_options);

// Disk only. `dir` holds variant folders, or a build/ that does. Errors: kNotFound.
Result<VariantDecisions> local_variant_decisions(const std::filesystem::path& dir,
                                                 const resolver::Environment& environment,
                                                 const resolver::SelectOptions& select_options);

// The Hub path of get_kernel up to the load: resolve (or read the lock), list, select, download,
// verify. Errors as values; configuration passed in.
Result<FetchedVariant> fetch_hub_variant(const client::RepoId& repo, const GetKernelOptions& options,
                                         const resolver::Environment& environment, const EnvironmentSource& env);

// The local path up to the load: the best variant under `path` (see get_local_kernel), verified.
// `for_python`: as GetKernelOptions::for_python.
Result<FetchedVariant> fetch_local_variant(const std::filesystem::path& path, const resolver::Environment& environment,
                                           bool for_python = false);

// `environment` with the backend the caller asked for ("cpu", or the backend torch was built for)
// instead of the detected one. Errors: kInvalidArgument for another backend.
Result<resolver::Environment> with_backend(resolver::Environment environment,
                                           const std::optional<std::string>& backend);

// dlopens a fetched variant's op library (loader pre-flight first) and makes it a Kernel.
Result<Kernel> load_fetched_variant(FetchedVariant fetched, const EnvironmentSource& env);

// The Hub path of get_kernel, with errors as values and configuration passed in: resolve the
// revision (or v<N>), list build/, select, download and verify the variant into the cache, load.
Result<Kernel> load_hub_kernel(const client::RepoId& repo, const GetKernelOptions& options,
                               const resolver::Environment& environment, const EnvironmentSource& env);

// The local path, with errors as values and configuration passed in.
Result<Kernel> load_local_kernel(const std::filesystem::path& path, const resolver::Environment& environment,
                                 const EnvironmentSource& env);

}  // namespace kernelhub
