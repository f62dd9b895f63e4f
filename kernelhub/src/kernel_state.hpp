// What a Kernel holds: the loaded library and what the fetch learnt. Shared, never changed.
#pragma once

#include <memory>
#include <vector>

#include "kernelhub/fetch/internal/fetch.hpp"
#include "kernelhub/kernelhub.hpp"
#include "kernelhub/loader/internal/op_library.hpp"

namespace kernelhub {

struct Kernel::State {
  std::shared_ptr<const loader::OpLibrary> library;
  FetchedVariant fetched;            // path, variant, revision, metadata, decisions, timings (load included)
  std::vector<Kernel> dependencies;  // loaded before it (metadata.json `kernel-depends`), kept loaded
};

}  // namespace kernelhub
