// LoadTimings: where the time and the work of one get_kernel (or fetch_kernel) went.
#pragma once

#include <cstdint>

namespace kernelhub {

struct LoadTimings {
  double resolve = 0;              // revision → commit, listing, selection (seconds)
  double download = 0;             // fetching missing files into the cache (0 when all were cached)
  double verify = 0;               // signature, lock hash, metadata.json digest, ELF and device code
  double load = 0;                 // pre-flight against this process, dlopen and op registration
  int requests = 0;                // every HTTP request made (0 for a local or fully cached pinned load)
  std::uint64_t bytes_hashed = 0;  // bytes read to verify: each file once, 0 when a stamp proved it
};

}  // namespace kernelhub
