// URL helpers for Hub requests, over libcurl's URL API (CURLU): the origin (scheme://host:port) of
// a URL, RFC 3986 reference resolution for Location and Link headers, and the form of a URL that
// messages may show. Path parts are quoted with base's percent_encode (percent_encoding.hpp).
#pragma once

#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"

namespace kernelhub::client::url {

// "http://127.0.0.1:8080" for "http://127.0.0.1:8080/a/b?c"; lower-cased scheme and host, default
// port made explicit, so two spellings of one origin compare equal. Empty when `url` does not
// parse, which equals no Hub origin (the endpoint always parses: Settings checks it).
std::string origin(std::string_view url);

// Resolves a Location or Link value against the URL it came from: absolute, scheme-relative
// ("//host/x"), absolute-path ("/x"), relative-path ("x", "../x") and query ("?x") forms.
// Errors: kCorruptFile when the value is not a URL reference.
Result<std::string> resolve(std::string_view base, std::string_view location);

// The URL without its query string, for messages (signed URLs carry secrets there).
std::string redact(std::string_view url);

}  // namespace kernelhub::client::url
