// base64 (RFC 4648, standard alphabet), through OpenSSL's EVP_EncodeBlock and EVP_DecodeBlock.
//
// Two decoders, because two kinds of text come in: keys and signatures must have exactly one
// spelling (a value that could be written two ways could be signed one way and shown another),
// while the Hub's upload bodies may leave the padding out.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kernelhub {

// Padded, no line breaks.
std::string base64_encode(std::string_view bytes);
std::string base64_encode(std::span<const std::uint8_t> bytes);

// Only what base64_encode writes: padded, nothing outside the alphabet (no whitespace), and the
// bits that padding drops zero. nullopt for anything else.
std::optional<std::string> base64_decode(std::string_view text);

// As huggingface_hub's upload bodies are read: the padding may be left out and the dropped bits
// are ignored; still nothing outside the alphabet, and `=` only at the end. nullopt otherwise.
std::optional<std::string> base64_decode_lenient(std::string_view text);

}  // namespace kernelhub
