#include "kernelhub/base/internal/sha1.hpp"

#include "kernelhub/base/internal/hex.hpp"

namespace kernelhub {

std::string Sha1::finish_hex() {
  std::uint8_t out[20];
  return to_hex(std::span<const std::uint8_t>(out, finish_into(out)));
}

std::string sha1_hex(std::string_view bytes) {
  Sha1 hasher;
  hasher.update(bytes);
  return hasher.finish_hex();
}

}  // namespace kernelhub
