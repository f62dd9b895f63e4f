// Ed25519 keys (OpenSSL EVP) for signing variants, and the two text forms they are stored in:
//
//   private key: PEM PKCS#8 ("-----BEGIN PRIVATE KEY-----", what `kernelhub keygen` and
//                `openssl genpkey -algorithm ed25519` write), or one line of base64 holding the
//                32-byte seed;
//   public key:  PEM SubjectPublicKeyInfo ("-----BEGIN PUBLIC KEY-----", `openssl pkey -pubout`),
//                or one line of base64 holding the 32 raw bytes (what KERNELHUB_TRUSTED_KEYS and
//                `kernelhub keygen`'s .pub file use).
//
// A key id is the first 16 hex digits of sha256(raw public key): a hint that names a key in a
// signature file and in error messages, never a reason to trust one.
//
// Thread safety: value types. PrivateKey wipes its seed when destroyed.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"

namespace kernelhub::signing {

inline constexpr std::size_t kSignatureSize = 64;  // Ed25519 signatures are always 64 bytes

using PublicKeyBytes = std::array<std::uint8_t, 32>;

class PublicKey {
 public:
  static PublicKey from_raw(const PublicKeyBytes& raw) { return PublicKey(raw); }
  // PEM or base64 of the raw bytes; surrounding whitespace is ignored. Errors: kInvalidArgument.
  static Result<PublicKey> parse(std::string_view text);
  // Errors: kNotFound, kIo, kInvalidArgument (naming the file).
  static Result<PublicKey> read(const std::filesystem::path& path);

  const PublicKeyBytes& raw() const { return raw_; }
  std::string to_base64() const;
  std::string to_pem() const;
  std::string key_id() const;

  // True iff `signature` (64 raw bytes) is this key's Ed25519 signature of exactly `message`.
  bool verify(std::string_view message, std::string_view signature) const;

  bool operator==(const PublicKey&) const = default;

 private:
  explicit PublicKey(const PublicKeyBytes& raw) : raw_(raw) {}
  PublicKeyBytes raw_;
};

class PrivateKey {
 public:
  // A fresh key from OpenSSL's CSPRNG. Errors: kInternal.
  static Result<PrivateKey> generate();
  // PEM PKCS#8 or base64 of the 32-byte seed. Errors: kInvalidArgument.
  static Result<PrivateKey> parse(std::string_view text);
  // Errors: kNotFound, kIo, kInvalidArgument (naming the file).
  static Result<PrivateKey> read(const std::filesystem::path& path);

  PrivateKey(const PrivateKey& other) : seed_(other.seed_) {}
  PrivateKey& operator=(const PrivateKey& other) = default;
  ~PrivateKey();

  // Writes the PEM form to a new file with mode 0600; refuses to replace an existing file, so
  // a key is never overwritten by mistake. Errors: kInvalidArgument (exists), kIo.
  Status write(const std::filesystem::path& path) const;
  std::string to_pem() const;
  PublicKey public_key() const;

  // The 64-byte Ed25519 signature of exactly `message` (PureEdDSA: no pre-hash).
  std::string sign(std::string_view message) const;

 private:
  explicit PrivateKey(const std::array<std::uint8_t, 32>& seed) : seed_(seed) {}
  std::array<std::uint8_t, 32> seed_;
};

// Writes `text` to a new file with `mode`, failing if it exists. Errors: kInvalidArgument, kIo.
Status write_new_file(const std::filesystem::path& path, std::string_view text, unsigned mode);

}  // namespace kernelhub::signing
