// GetKernelOptions: how get_kernel (kernelhub.hpp), tvm_ffi::get_kernel (tvm_ffi.hpp) and
// fetch_kernel (fetch_kernel.hpp) find a kernel:
// which revision or version, which backend, offline or not, whom to trust, a lock file.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kernelhub {

namespace client {
class ProgressSink;  // kernelhub/client/progress.hpp
}

struct GetKernelOptions {
  std::optional<std::string> revision;  // branch, tag or commit ...
  std::optional<int> version;           // ... or major version: branch v<N>
  std::optional<std::string> backend;   // "cpu", or the backend torch was built for
  bool offline = false;                 // the cache only, no request (also HF_HUB_OFFLINE=1)
  bool trust_remote_code = false;       // else: orgs the Hub trusts, KERNELHUB_TRUSTED, trusted_repos
  std::vector<std::string> trusted_repos;
  std::optional<std::filesystem::path> lockfile;  // kernels.lock: the locked commit, its hash checked
  // Refuse a variant that is not signed by a signer accepted for it (docs/SIGNING.md), instead of
  // warning (also KERNELHUB_REQUIRE_SIGNATURE=1; a repo with signers configured always is).
  bool require_signature = false;
  // Where each warning of the load goes (Kernel::warnings() keeps them too); none: stderr, as
  // `kernelhub: warning: <sentence>`.
  std::function<void(const std::string&)> on_warning;
  // Where the progress of a download goes (not owned; must outlive the call), retries included:
  // a client::ProgressReporter draws the CLI's line on a terminal. None: nowhere.
  client::ProgressSink* progress = nullptr;
};

}  // namespace kernelhub
