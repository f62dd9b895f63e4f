#include "kernelhub/base/internal/random_name.hpp"

#include <openssl/rand.h>

#include <fstream>

#include "kernelhub/base/internal/hex.hpp"

namespace kernelhub {

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) {
    // RAND_bytes only fails without an entropy source; read the kernel's directly then.
    std::ifstream urandom("/dev/urandom", std::ios::binary);
    urandom.read(raw.data(), static_cast<std::streamsize>(bytes));
  }
  return to_hex(raw);
}

}  // namespace kernelhub
