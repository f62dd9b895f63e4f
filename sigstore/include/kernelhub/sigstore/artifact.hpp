// Artifact: what a bundle's signature is checked against: the signed bytes themselves, or only
// their SHA-256 (the conformance protocol's `sha256:<hex>`, a caller that hashed a large file as it
// streamed in).
//
// A digest is enough for an ECDSA or RSA message signature over SHA-256 (the only kind Fulcio
// certificates and cosign's default keys make) and for a DSSE envelope (an in-toto statement names
// its subjects by digest). Ed25519 message signatures, and signatures over SHA-384/512, need the
// bytes; verify() says so when it is given a digest for one.
//
// Thread safety: a value type.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"

namespace kernelhub::sigstore {

class Artifact {
 public:
  using Sha256 = std::array<std::uint8_t, 32>;

  // The artifact's bytes (its SHA-256 is computed here, once).
  static Artifact bytes(std::string data);
  // Only its SHA-256: 64 hex digits, with or without a `sha256:` prefix, either case.
  // Errors: kInvalidArgument.
  static Result<Artifact> sha256(std::string_view hex_digest);
  static Artifact sha256(const Sha256& digest);

  bool has_bytes() const { return data_.has_value(); }
  // REQUIRES: has_bytes().
  const std::string& data() const { return *data_; }
  const Sha256& sha256_digest() const { return sha256_; }
  std::string sha256_hex() const;

 private:
  Artifact() = default;
  std::optional<std::string> data_;
  Sha256 sha256_{};
};

}  // namespace kernelhub::sigstore
