// The oracle of every target: a property that does not hold aborts, which libFuzzer reports as a
// crash and saves the input for.
#pragma once

#include <cstdlib>

namespace kernelhub::fuzz {

inline void require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace kernelhub::fuzz
