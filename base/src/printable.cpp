#include "kernelhub/base/internal/printable.hpp"

#include <cstdint>

namespace kernelhub {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void escape_byte(std::string& out, unsigned char byte) {
  out += "\\x";
  out += kHex[byte >> 4];
  out += kHex[byte & 15];
}

// The length of the well-formed UTF-8 character at the start of `text` (RFC 3629: no overlong
// form, no surrogate, nothing above U+10FFFF), or 0.
std::size_t utf8_length(std::string_view text, std::uint32_t& code_point) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  std::uint32_t min = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2, code_point = lead & 0x1f, min = 0x80;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3, code_point = lead & 0x0f, min = 0x800;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4, code_point = lead & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(i) & 0x3f);
  }
  if (code_point < min || code_point > 0x10ffff || (code_point >= 0xd800 && code_point <= 0xdfff)) return 0;
  return length;
}

}  // namespace

std::string printable(std::string_view text, Lines lines) {
  const bool keep_lines = lines == Lines::kKept;
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      if ((byte < 0x20 && !(keep_lines && (byte == '\n' || byte == '\t'))) || byte == 0x7f) {
        escape_byte(out, byte);
      } else {
        out.push_back(static_cast<char>(byte));
      }
      ++i;
      continue;
    }
    std::uint32_t code_point = 0;
    const std::size_t length = utf8_length(text.substr(i), code_point);
    if (length == 0) {
      escape_byte(out, byte);
      ++i;
    } else if (code_point <= 0x9f) {  // C1 (a two-byte character from U+0080)
      out += "\\u00";
      out += kHex[code_point >> 4];
      out += kHex[code_point & 15];
      i += length;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

}  // namespace kernelhub
