// The one rule for boolean environment variables: huggingface_hub's truthy set (1, ON, YES, TRUE)
// is on, the same words' opposites (0, OFF, NO, FALSE) are off, any case. is_truthy
// (environment_source.hpp) is this rule for a variable that is off unless set on; KERNELHUB_FSYNC
// is on unless set off.
#pragma once

#include <optional>
#include <string>

namespace kernelhub {

// On for the truthy set, off for its opposites; anything else, or unset, is `otherwise`.
bool flag_or(const std::optional<std::string>& value, bool otherwise);

}  // namespace kernelhub
