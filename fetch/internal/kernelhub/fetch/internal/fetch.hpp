// The fetch stage of get_kernel: everything up to the load, without torch.
//
//   resolve   revision or v<N> → commit (or the commit a lock file pins); offline: refs/ only
//   list      build/ at that commit, from the one tree listing the fetch reads
//   select    resolver::select for the environment given, then the GPU fit when there are GPUs
//   download  the chosen variant's files into the Hugging Face cache (missing ones only)
//   verify    signature (when a key is trusted), lock hash, the checks of variant_checks.hpp
//             (kernels-minver, metadata.json digest), the op library's ELF and device code;
//             each byte read and hashed once (see below)
//
// Each file is read once per fetch: the signature, the lock entry and the digest share one
// FileDigests (sha256 and git blob sha1 from the same read), and the op library's ELF is parsed
// from the bytes that were hashed. A variant verified before is not hashed again while its files
// are provably unchanged: in its Session (the same files, stamps unchanged), and across
// processes through a verification stamp (device, inode, size, change time of every file, kept in
// kernelhub's state directory, never in the shared cache; verification_stamps.hpp). A file that
// changed on disk is always hashed again before it is trusted.
//
// Not installed: the stage and its callers' knobs are kernelhub's own. The CLI's torch-free
// commands and the Python binding call it directly; get_kernel adds the load (load.hpp); a program
// that uses the package calls get_kernel, tvm_ffi::get_kernel or fetch_kernel (fetch_kernel.hpp). Errors are values:
// those of client::HubClient, plus kNoCompatibleVariant with the decision trace, kIntegrityMismatch,
// kBadSignature/kMissingSignature, kUntrustedPublisher, kInvalidArgument (neither or both of revision and version).
//
// What fetches share (the Hub connection, parsed listings, trust answers, verification records)
// lives in their Session (session.hpp): FetchContext::session, else the process's.
//
// Thread safety: fetch_variant may run on several threads at once; the cache's locks make
// concurrent processes download each blob once.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/client/progress.hpp"
#include "kernelhub/client/repo_id.hpp"
#include "kernelhub/fetch/get_kernel_options.hpp"
#include "kernelhub/fetch/load_timings.hpp"
#include "kernelhub/fetch/metadata.hpp"
#include "kernelhub/resolver/environment.hpp"
#include "kernelhub/resolver/loadable.hpp"
#include "kernelhub/resolver/select.hpp"

namespace kernelhub {
namespace binary_format {
class LibraryImage;  // an op library's ELF and device code
                     // (binary_format/internal/kernelhub/binary_format/internal/library_image.hpp)
}

struct LockFile;  // lockfile.hpp
class Session;    // session.hpp

// What to fetch and how.
struct FetchRequest {
  std::variant<client::RepoId, std::filesystem::path> source;  // a Hub repo, or a local directory
  std::optional<std::string> revision;                         // branch, tag or commit
  std::optional<int> version;                                  // major version: branch v<N>
  bool offline = false;                                        // also HF_HUB_OFFLINE
  bool trust_remote_code = false;                              // as in GetKernelOptions
  std::vector<std::string> trusted_repos;
  std::optional<std::filesystem::path> lockfile;
  bool require_signature = false;
  // What the loading process can load (resolver/loadable.hpp): a C++ process with LibTorch
  // dlopens torch builds; a Python process also imports pure-Python ones (torch-universal,
  // torch-<backend>), as the kernels package does, and needs no op library.
  resolver::Loadable loadable = resolver::Loadable::cpp_process();
  // Check a downloaded variant in the kernels package's order: its digest speaks before the
  // cached blobs' own names (the Python shim), where kernelhub names a changed blob first.
  bool blobs_checked_last = false;
  // Fit CUDA variants to the visible GPUs (their metadata.json `backend.archs`, then the device
  // code of the library). kernels' `check_arch=False` turns it off, for kernels that run on more
  // GPUs than they declare (a Triton fallback in their Python code).
  bool check_arch = true;
  // Honour UNSTABLE_KERNELS_ALL_LATEST (1, on, yes or true) as kernels' loaders do: the repo's
  // highest v<N>, whatever version, revision or lock the request names, with a warning.
  bool honour_all_latest = false;
  // For a kernel another kernel depends on, with a lock file: the version or revision the
  // dependent's metadata.json asks for. The lock must record exactly that (kernels keys lock
  // entries by repo and version); without it the lock entry of the repo is taken, whatever its
  // version. Unused without a lock file.
  std::optional<KernelDependency> locked_as;
  // Resolve, select and check the publisher, then read the chosen variant's metadata.json only:
  // nothing else is downloaded or verified (`kernelhub info`, has_kernel). FetchedVariant::path
  // names the variant's directory all the same.
  bool metadata_only = false;
  // A lock read elsewhere (the `kernels.lock` text of a Python package's metadata), used as a
  // `lockfile` would be; `lock_source` names it in messages. At most one of the two.
  std::shared_ptr<const LockFile> lock;
  std::string lock_source;
};

// The seams of a fetch: the configuration (read once, by the caller: process_environment() at an
// entry point, map_environment() in a test) and the Session.
struct FetchContext {
  // No default for `env`: whoever makes a context says where its configuration comes from.
  FetchContext(resolver::Environment environment, EnvironmentSource env, std::shared_ptr<Session> session = nullptr,
               client::ProgressSink* progress = nullptr)
      : environment(std::move(environment)), env(std::move(env)), session(std::move(session)), progress(progress) {}

  resolver::Environment environment;
  EnvironmentSource env;
  // The transport, listings, trust answers and verification records to use (session.hpp);
  // none: Session::process_default().
  std::shared_ptr<Session> session;
  // Where download progress goes (not owned); none: nowhere.
  client::ProgressSink* progress = nullptr;
};

// A variant on disk, downloaded and verified, not loaded.
struct FetchedVariant {
  std::filesystem::path path;                    // the variant directory
  std::string variant;                           // its name, e.g. torch215-cxx11-cpu-x86_64-linux
  std::string revision;                          // the commit, or "local"
  Metadata metadata;                             // metadata.json (or the namespace from _ops.py)
  std::vector<resolver::Decision> decisions;     // best first; empty for a variant directory
  std::optional<std::filesystem::path> library;  // the op library (native variants)
  // The library's ELF and device code when the fetch read them (to fit the GPUs): the load's
  // pre-flight uses the same parse. None when nothing needed them yet.
  std::shared_ptr<const binary_format::LibraryImage> image;
  LoadTimings timings;  // resolve, download, verify
  // What the load should tell the user and did not stop it: no digest to verify the files by, a
  // build from a dirty tree, UNSTABLE_KERNELS_ALL_LATEST overriding the version asked for. Each
  // in kernelhub's words, with what it warns of as a value (fetch/problem.hpp).
  std::vector<Warning> warnings;
  // Answers taken from the cache because the Hub could not be reached (client::HubClient::
  // fallbacks()), one sentence each: a caller says them (the CLI on stderr and in --json).
  std::vector<std::string> fallbacks;
};

// Every variant of a repo or directory, best first, for ctx.environment.
struct VariantDecisions {
  std::string revision;                       // as asked ("v1", a branch, "local")
  std::string commit;                         // the resolved commit; empty for a directory
  std::filesystem::path root;                 // for a directory: where the variant folders are
  std::vector<resolver::Decision> decisions;  // best first
  std::vector<std::string> fallbacks;         // as in FetchedVariant
};

// The `kernels` package's rule for a request by revision or version (kernels/_versions.py
// `revision_or_version`): exactly one of the two, checked before anything is read. Errors:
// kInvalidArgument in the kernels package's words. (get_kernel in C++ refuses both itself and
// leaves neither to the resolve step, whose message lists the versions the repo has.)
Status require_revision_or_version(const std::optional<std::string>& revision, const std::optional<int>& version);

// Resolve, list, select, download and verify the variant of request.source that runs here.
Result<FetchedVariant> fetch_variant(const FetchRequest& request, const FetchContext& ctx);

// The decision trace alone (network: refs and one listing; metadata.json of CUDA candidates when
// there are GPUs). `check_trust`: the publisher trust check of a load comes first.
Result<VariantDecisions> variant_decisions(const FetchRequest& request, const FetchContext& ctx,
                                           bool check_trust = false);

// The request get_kernel, tvm_ffi::get_kernel and fetch_kernel make for `repo_id` and `options`, for
// a process that loads `loadable` (LOCAL_KERNELS in `env` turns it into a local directory). Errors:
// kInvalidArgument (a malformed repo id; both a revision and a version), those of LOCAL_KERNELS.
Result<FetchRequest> fetch_request(std::string_view repo_id, const GetKernelOptions& options,
                                   const resolver::Loadable& loadable, const EnvironmentSource& env);

// Says each of a load's `warnings` as get_kernel does: to options.on_warning, else on stderr as
// `kernelhub: warning: <sentence>`.
void say_warnings(const std::vector<std::string>& warnings, const GetKernelOptions& options);

// `environment` with the backend the caller asked for ("cpu", or the backend torch was built
// for) instead of the detected one. Errors: kInvalidArgument for another backend.
Result<resolver::Environment> with_backend(resolver::Environment environment,
                                           const std::optional<std::string>& backend);

}  // namespace kernelhub
