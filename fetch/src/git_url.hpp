// Whether a string is a git URL as kernels-data's GitUrl (config/git_url.rs) accepts it, for
// metadata.json `upstream` and `source`: a URL, as Rust's `url` crate (WHATWG) parses it, whose
// scheme is https, http, git, ssh, git+ssh, git+https or git+http, or an scp-like
// `[user@]host:path`. Of the URL grammar, the scheme and a `//` authority's host and port are
// checked; exotic hosts (IDNA, percent-encoding) are not judged.
//
// Thread safety: a pure function.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kernelhub {

// Why `s` is not a git URL, or nothing when it is one.
std::optional<std::string> git_url_problem(std::string_view s);

// Rust's usize::from_str: an optional `+`, then decimal digits that fit 64 bits.
bool is_usize(std::string_view s);

}  // namespace kernelhub
