// A signed variant directory in a fresh temp folder, and the small file helpers the signing
// tests share.
#pragma once

#include <filesystem>
#include <string>

#include "kernelhub/signing/internal/keys.hpp"
#include "kernelhub/signing/internal/verify.hpp"
#include "support/temp_dir.hpp"

namespace kernelhub::signing::testing {

inline constexpr const char* kRepo = "acme/reference-kernels";
inline constexpr const char* kVariant = "torch215-cxx11-cpu-x86_64-linux";

using kernelhub::testing::TempDir;

std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, const std::string& bytes);

// A fixed key (RFC 8032 test 1's seed) and a second, unrelated one.
PrivateKey publisher_key();
PrivateKey other_key();

// `<root>/<variant>/` with metadata.json, __init__.py, _ops.py, an op library and a nested
// package file, signed for kRepo version 2 by publisher_key().
struct SignedVariant {
  TempDir temp;
  std::filesystem::path dir;
  explicit SignedVariant(const std::string& variant = kVariant, int version = 2);
  // Expects kRepo, version 2, this variant.
  ExpectedVariant expected() const;
  // publisher_key() trusted for `acme`.
  static VerifyPolicy trusting_publisher();
};

}  // namespace kernelhub::signing::testing
