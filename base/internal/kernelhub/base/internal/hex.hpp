// Lower-case hexadecimal, as digests, commit ids and random names are written everywhere.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace kernelhub {

// Two lower-case hex digits per byte.
std::string to_hex(std::span<const std::uint8_t> bytes);
std::string to_hex(std::string_view bytes);

// Whether `text` is exactly `length` lower-case hex digits, as to_hex writes them (64 for sha256,
// 40 for a git sha1 or commit id).
bool is_lower_hex(std::string_view text, std::size_t length);

}  // namespace kernelhub
