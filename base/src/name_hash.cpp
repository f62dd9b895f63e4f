#include "kernelhub/base/internal/name_hash.hpp"

#include <cstdint>
#include <cstdio>

namespace kernelhub {

std::string name_hash(std::string_view text) {
  constexpr std::uint64_t kPrime = 0x100000001b3ULL;
  std::uint64_t forward = 0xcbf29ce484222325ULL;
  std::uint64_t backward = 0x6c62272e07bb0142ULL;
  for (std::size_t i = 0; i < text.size(); ++i) {
    forward = (forward ^ static_cast<unsigned char>(text[i])) * kPrime;
    backward = (backward ^ static_cast<unsigned char>(text[text.size() - 1 - i])) * kPrime;
  }
  char out[33];
  std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(forward),
                static_cast<unsigned long long>(backward));
  return out;
}

}  // namespace kernelhub
