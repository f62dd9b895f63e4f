// Percent-encoding (RFC 3986 §2.1), as huggingface_hub quotes path parts (`quote(x, safe="")`)
// and as the server reads them back.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kernelhub {

// Everything but the unreserved characters A-Za-z0-9-._~ becomes %XX (upper-case hex): one path
// segment, e.g. a revision (`refs/pr/1` -> `refs%2Fpr%2F1`).
std::string percent_encode(std::string_view text);
// The same, keeping `/`: a file path below /resolve/.
std::string percent_encode_path(std::string_view text);

// %XX decoded, and `+` as a space when `plus_is_space` (form bodies and query strings). nullopt
// on a malformed escape (`%2`, `%zz`), so a bad request is refused rather than guessed at.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space = false);

}  // namespace kernelhub
