// LOCAL_KERNELS: `repo_a=/path:repo_b=/path`, mapping repo ids to local kernel directories, as
// the `kernels` package reads it (kernels/src/kernels/load.py). get_kernel(repo) loads the local
// path instead of going to the Hub when the repo is listed.
//
// Stricter than kernels, on purpose: each repo id must be a valid `org/name` and each path
// non-empty; empty entries (`a/b=/p:`) are skipped.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"

namespace kernelhub {

// Errors: kInvalidArgument naming the malformed entry (with its Problem, problem.hpp), or the repo
// id that is not `org/name`.
Result<std::map<std::string, std::filesystem::path>> parse_local_kernels(std::string_view value);

// The directory LOCAL_KERNELS (read from `env`) names for `repo_id`; none when it is unset or does
// not list the repo (an id that is not `org/name` is never listed). A malformed value fails every
// lookup, as in kernels. Errors: those of parse_local_kernels.
Result<std::optional<std::filesystem::path>> local_kernel_dir(std::string_view repo_id, const EnvironmentSource& env);

}  // namespace kernelhub
