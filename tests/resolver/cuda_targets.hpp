// Test helper: CUDA targets from their names, as a fatbinary or metadata.json would list them.
#pragma once

#include <initializer_list>
#include <vector>

#include "kernelhub/resolver/cuda_target.hpp"

namespace kernelhub::resolver::testing {

// targets({"sm_80", "compute_90"}). REQUIRES: every name parses.
inline std::vector<CudaTarget> targets(std::initializer_list<const char*> names) {
  std::vector<CudaTarget> out;
  for (const char* n : names) out.push_back(CudaTarget::parse(n).value());
  return out;
}

}  // namespace kernelhub::resolver::testing
