// The tests' way to load a local kernel directory with a given environment and configuration:
// the fetch and load stages, errors as values.
#pragma once

#include <filesystem>

#include "kernelhub/internal/load.hpp"

namespace kernelhub {

inline Result<Kernel> load_local(const std::filesystem::path& dir, const resolver::Environment& environment,
                                 const EnvironmentSource& env) {
  FetchRequest request;
  request.source = dir;
  return load_kernel(request, FetchContext{environment, env, nullptr});
}

}  // namespace kernelhub
