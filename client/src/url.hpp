// URL helpers for Hub requests: the origin (scheme://host:port) of a URL, and RFC 3986 reference
// resolution for Location headers. Path parts are quoted with base's percent_encode
// (percent_encoding.hpp).
#pragma once

#include <string>
#include <string_view>

namespace kernelhub::client::url {

// "http://127.0.0.1:8080" for "http://127.0.0.1:8080/a/b?c"; lower-cased scheme and host,
// default port made explicit, so two spellings of one origin compare equal.
std::string origin(std::string_view url);

// Resolves a Location value against the URL it came from: absolute, scheme-relative
// ("//host/x"), absolute-path ("/x") and relative-path ("x", "../x") forms.
std::string resolve(std::string_view base, std::string_view location);

// The URL without its query string, for messages (signed URLs carry secrets there).
std::string redact(std::string_view url);

}  // namespace kernelhub::client::url
