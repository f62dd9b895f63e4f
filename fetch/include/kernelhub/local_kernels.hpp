// LOCAL_KERNELS: `repo_a=/path:repo_b=/path`, mapping repo ids to local kernel directories, as
// the `kernels` package reads it (kernels/src/kernels/load.py). get_kernel(repo) loads the local
// path instead of going to the Hub when the repo is listed.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "kernelhub/base/result.hpp"

namespace kernelhub {

// Errors: kInvalidArgument naming the malformed entry.
Result<std::map<std::string, std::filesystem::path>> parse_local_kernels(std::string_view value);

}  // namespace kernelhub
