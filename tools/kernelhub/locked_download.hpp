// `kernelhub download --lockfile F`: every kernel a lock file pins (or the ones named), at its
// locked commit, into the Hugging Face cache, checked against the lock's variant hashes. What a
// login node runs to fill a shared cache for compute nodes that load with HF_HUB_OFFLINE=1
// (docs/CLUSTER.md).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/client/internal/hub_client.hpp"
#include "kernelhub/resolver/environment.hpp"
#include "kernelhub/resolver/loadable.hpp"

namespace kernelhub::cli {

struct LockedDownload {
  std::filesystem::path lockfile;
  std::vector<std::string> repos;      // empty: every kernel in the lock file
  std::optional<std::string> variant;  // one variant by name
  bool all_variants = false;           // every variant at the locked commit (a cache for mixed nodes)
  // The machine to select for (selection_environment.hpp); needed unless `variant` or
  // `all_variants` names what to fetch.
  std::optional<resolver::Environment> environment;
  resolver::Loadable loadable = resolver::Loadable::python_process();  // what loads there
  bool quiet = false;
  bool force = false;  // download every file again (checked_download.hpp)
};

// Downloads and checks each locked kernel (the cache too: checked_download.hpp); returns
// {"lockfile", "kernels": [{repo, commit, variants, paths, files, bytes, downloaded_bytes,
// resumed_bytes, repaired, requests}]}. Without `variant` or
// `all_variants`, the variant `environment` would load. Errors: those of LockFile::read, kNotFound
// for a named repo the lock file does not pin, kNoCompatibleVariant, the client's, and
// kIntegrityMismatch when a variant's files do not hash to the locked value.
Result<nlohmann::json> download_locked(const LockedDownload& request, const client::HubClient& hub,
                                       const EnvironmentSource& env);

}  // namespace kernelhub::cli
