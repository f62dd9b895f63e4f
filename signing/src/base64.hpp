// Strict base64 (RFC 4648, standard alphabet, padded) for keys and signatures: a decoder that
// rejects anything a canonical encoder would not have written, so one value has one spelling.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kernelhub::signing {

std::string base64_encode(std::string_view bytes);

// nullopt for a wrong length, a character outside the alphabet, misplaced padding or non-zero
// padding bits.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace kernelhub::signing
