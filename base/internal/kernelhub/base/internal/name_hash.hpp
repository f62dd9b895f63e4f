// name_hash: a file name for a text too long or too free to be one (a path, a machine's key):
// 128 bits of FNV-1a (two 64-bit streams, over the text forwards and backwards, seeded apart), as
// 32 hex digits. A name, not a proof: a file named so says what it is for, and one that says
// something else is ignored. No digest, so a warm load starts none of OpenSSL's providers, which
// its first SHA-256 costs (about 3 million instructions).
//
// Thread safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace kernelhub {

std::string name_hash(std::string_view text);

}  // namespace kernelhub
