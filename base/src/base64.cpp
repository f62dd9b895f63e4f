#include "kernelhub/base/internal/base64.hpp"

#include <openssl/evp.h>

#include <algorithm>

namespace kernelhub {

namespace {

bool in_alphabet(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

// Decodes whole groups of four characters; `padding` is how many `=` end the text. OpenSSL writes
// three bytes for every group, padding included, and skips surrounding whitespace: the callers
// have checked the characters, and the bytes the padding stands for are dropped here.
std::optional<std::string> decode_groups(std::string_view text, std::size_t padding) {
  if (text.empty()) return std::string();
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0 || static_cast<std::size_t>(n) != out.size()) return std::nullopt;
  out.resize(out.size() - padding);
  return out;
}

std::size_t trailing_padding(std::string_view text) {
  std::size_t padding = 0;
  while (padding < text.size() && text[text.size() - 1 - padding] == '=') ++padding;
  return padding;
}

}  // namespace

std::string base64_encode(std::span<const std::uint8_t> bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');  // EVP_EncodeBlock adds a '\0'
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string base64_encode(std::string_view bytes) {
  return base64_encode(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

std::optional<std::string> base64_decode(std::string_view text) {
  const std::size_t padding = trailing_padding(text);
  if (text.size() % 4 != 0 || padding > 2 || !std::all_of(text.begin(), text.end() - padding, in_alphabet)) {
    return std::nullopt;
  }
  auto out = decode_groups(text, padding);
  // Canonical: encoding the bytes again gives the same text (so the dropped bits were zero).
  if (!out || base64_encode(*out) != text) return std::nullopt;
  return out;
}

std::optional<std::string> base64_decode_lenient(std::string_view text) {
  const std::size_t padding = trailing_padding(text);
  const std::string_view body = text.substr(0, text.size() - padding);
  if (padding > 2 || body.size() % 4 == 1 || !std::all_of(body.begin(), body.end(), in_alphabet)) {
    return std::nullopt;
  }
  const std::size_t missing = (4 - body.size() % 4) % 4;
  return decode_groups(std::string(body) + std::string(missing, '='), missing);
}

}  // namespace kernelhub
