// download_blobs: fetches a set of blobs in parallel into blobs/ and links them into a snapshot.
// The engine behind HubClient's downloads: one Workload on the Transport, a state machine per
// file (lock -> GET -> redirects -> stream+hash -> verify -> publish -> link), resume with Range,
// retries with backoff. See Note [Atomic publish] in cache_layout.hpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "kernelhub/base/sha256.hpp"

#include "hub_errors.hpp"
#include "kernelhub/client/cache_layout.hpp"
#include "kernelhub/client/progress.hpp"
#include "kernelhub/client/settings.hpp"
#include "kernelhub/client/transport.hpp"

namespace kernelhub::client {

struct BlobJob {
  std::string path;  // repo path, linked at snapshots/<commit>/<path>
  std::string etag;  // 64 hex (sha256) or 40 hex (git blob sha1)
  std::uint64_t size = 0;
  std::string url;   // where to GET it first (resolve URL or a storage Location)
};

struct BlobReport {
  std::uint64_t bytes = 0;  // bytes received
  int requests = 0;
  std::map<std::filesystem::path, FileHash> sha256;  // of each blob this call wrote, by blob path
};

// Downloads every job not already in blobs/ (another process may fetch it meanwhile: the lock
// makes us wait and then reuse its blob), links each into snapshots/<commit>/. Returns the
// first error once every job has ended; successful files stay cached.
Result<BlobReport> download_blobs(const CacheLayout& layout, const std::string& commit, std::vector<BlobJob> jobs,
                                  const Settings& settings, Transport& transport, ProgressReporter& progress,
                                  const What& what);

}  // namespace kernelhub::client
