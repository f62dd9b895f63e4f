// Random hex from the operating system's generator (OpenSSL RAND_bytes): unique temp and trash
// names, request ids, and the server's URL-signing secret.
//
// Thread safety: safe from any thread, and in a child after fork() (OpenSSL reseeds).
#pragma once

#include <cstddef>
#include <string>

namespace kernelhub {

// `bytes` random bytes as 2 * `bytes` lower-case hex characters.
std::string random_hex(std::size_t bytes);

}  // namespace kernelhub
