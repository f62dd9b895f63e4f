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

#include "kernelhub/base/internal/sha256.hpp"

#include "client_state.hpp"
#include "hub_errors.hpp"
#include "kernelhub/client/internal/cache_layout.hpp"
#include "kernelhub/client/internal/settings.hpp"
#include "kernelhub/client/internal/transport.hpp"
#include "kernelhub/client/progress.hpp"

namespace kernelhub::client {

struct BlobJob {
  std::string path;  // repo path, linked at snapshots/<commit>/<path>
  std::string etag;  // 64 hex (sha256) or 40 hex (git blob sha1)
  std::uint64_t size = 0;
  std::string url;       // where to GET it first (resolve URL or a storage Location)
  bool replace = false;  // download it even when blobs/<etag> exists (it changed in the cache)
  bool fresh = false;    // from the first byte: continue no partial download
};

struct BlobReport {
  std::uint64_t bytes = 0;          // bytes received
  std::uint64_t resumed_bytes = 0;  // bytes of earlier partial downloads continued, not fetched again
  int requests = 0;
  std::map<std::filesystem::path, FileHash> sha256;  // of each blob this call wrote, by blob path
};

// Downloads every job not already in blobs/ (another process may fetch it meanwhile: the lock
// makes us wait and then reuse its blob), links each into snapshots/<commit>/. Returns the
// first error once every job has ended; successful files stay cached.
//
// Note [Partial downloads]: a download that stops part-way is continued, not restarted. The bytes
// received go to blobs/<etag>.<8 hex>.incomplete, a name of this writer's own, while it holds the
// blob's .locks/ flock. When it gives up on the network (the host cannot be reached, or every
// retry failed), what it has is kept as blobs/<etag>.incomplete (huggingface_hub's name for the
// same thing); a writer that was killed leaves its own name. The next writer of the blob, holding
// the lock (so no writer of those files is alive), takes the longest such file under its own name,
// hashes what it holds and asks for the rest with `Range: bytes=<size>-`: the blob's hash still
// covers the whole file, so a partial file that was wrong fails the check and the blob is fetched
// again from the first byte. A server that ignores Range (200) restarts it too.
Result<BlobReport> download_blobs(const CacheLayout& layout, const std::string& commit, std::vector<BlobJob> jobs,
                                  const Settings& settings, Transport& transport, ClientState& state,
                                  ProgressReporter& progress, const What& what);

}  // namespace kernelhub::client
