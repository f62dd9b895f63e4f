// kernelhub's state directory: what one process keeps for the next on this machine (verification
// stamps, signature records, trusted publishers, the GPUs of this boot). `$KERNELHUB_STATE_DIR`,
// else `$XDG_STATE_HOME/kernelhub`, else `~/.local/state/kernelhub`; none where none of them is set.
// Never the Hugging Face cache, which other users and tools may write: the folder is the user's
// own (mode 0700 where kernelhub creates it).
//
// Thread safety: free functions.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

#include "kernelhub/base/environment_source.hpp"

namespace kernelhub {

std::optional<std::filesystem::path> state_dir_from(const EnvironmentSource& env);

// The folder `state_dir`/`name`, created (mode 0700, the state directory too where it is created
// here) if missing; none when it cannot be (best effort: what is kept there is a saving).
std::optional<std::filesystem::path> state_subdir(const std::filesystem::path& state_dir, std::string_view name);

}  // namespace kernelhub
