// GetKernelOptions: how get_kernel (kernelhub.hpp) and tvm_ffi::get_kernel (tvm_ffi.hpp) find a kernel:
// which revision or version, which backend, offline or not, whom to trust, a lock file.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kernelhub {

class Session;  // session.hpp

struct GetKernelOptions {
  std::optional<std::string> revision;  // branch, tag or commit ...
  std::optional<int> version;           // ... or major version: branch v<N>
  std::optional<std::string> backend;   // "cpu", or the backend torch was built for
  bool offline = false;                 // the cache only, no request (also HF_HUB_OFFLINE=1)
  bool trust_remote_code = false;       // else: orgs the Hub trusts, KERNELHUB_TRUSTED, trusted_repos
  std::vector<std::string> trusted_repos;
  std::optional<std::filesystem::path> lockfile;  // kernels.lock: the locked commit, its hash checked
  bool require_signature = false;                 // refuse unsigned variants (KERNELHUB_TRUSTED_KEYS)
  // The Hub connection, parsed listings, trust answers and verification records to use; none:
  // the process's (Session::process_default(), session.hpp).
  std::shared_ptr<Session> session;
};

}  // namespace kernelhub
