// A Sigstore instance of the tests' own making, so the verifier's every check can be driven from
// both sides without network or vendored files: a Fulcio-like CA, a CT log, a Rekor v1 log
// (ECDSA P-256), a Rekor v2 log (Ed25519) and an RFC 3161 TSA, each with fresh keys, the trusted
// root that lists them, and the bundles they would produce, as JSON a test can then break.
//
// Thread safety: one instance per test.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernelhub/sigstore/time.hpp"

namespace kernelhub::sigstore::testing {

// What the signing certificate says (Fulcio's extensions; absent ones are left out).
struct LeafOptions {
  std::string san = "https://github.com/huggingface/kernels-community/.github/workflows/build.yaml@refs/heads/main";
  std::optional<std::string> issuer_v1 = "https://token.actions.githubusercontent.com";
  std::optional<std::string> issuer_v2 = "https://token.actions.githubusercontent.com";
  std::optional<std::string> source_repository_uri = "https://github.com/huggingface/kernels-community";
  std::optional<std::string> build_signer_uri =
      "https://github.com/huggingface/kernels-community/.github/workflows/build.yaml@refs/heads/main";
  bool embed_sct = true;
  bool code_signing = true;
};

enum class LogKind { kRekorV1, kRekorV2 };

struct BundleOptions {
  LeafOptions leaf;
  std::string artifact = "{\"name\": \"relu\"}\n";  // signed as a message, or the in-toto subject
  bool dsse = false;                                // an in-toto statement about the artifact
  LogKind log = LogKind::kRekorV1;                  // v1: hashedrekord/dsse 0.0.1 with a SET
  bool timestamp = false;                           // an RFC 3161 timestamp (always with kRekorV2)
  std::string media_type = "application/vnd.dev.sigstore.bundle.v0.3+json";
  std::int64_t log_index = 5;
  std::int64_t tree_size = 11;
  // Seconds after the certificate's notBefore that the log integrated the entry (and the TSA
  // stamped it); the certificate is valid for 600 s.
  int signed_after = 60;
  std::optional<std::string> checkpoint_origin;  // default: the log's own
};

class TestInstance {
 public:
  TestInstance();
  ~TestInstance();
  TestInstance(const TestInstance&) = delete;
  TestInstance& operator=(const TestInstance&) = delete;

  // The trusted root listing this instance's CA, logs, CT log and TSA.
  nlohmann::json trusted_root() const;
  // A bundle over options.artifact. For media type version 0.1/0.2 the certificate goes in
  // `x509CertificateChain`.
  nlohmann::json bundle(const BundleOptions& options = {}) const;

  // The CA's own certificate (DER), to put where a bundle must not carry it.
  std::string root_certificate_der() const;
  // A PEM public key and private key pair, for managed-key bundles.
  std::string managed_public_key_pem() const;
  std::string managed_private_key_pem() const;
  // The signing certificate bundle() made last (DER).
  std::string last_leaf_der() const;
  // The name the Rekor v1 log signs checkpoints with.
  static constexpr const char* kRekorV1Name = "rekor.test.example";
  static constexpr const char* kRekorV2Name = "log2026.rekor.test.example";
  // notBefore of every signing certificate.
  Instant leaf_not_before() const;

  struct Keys;

 private:
  std::unique_ptr<Keys> keys_;
  mutable std::string last_leaf_der_;
};

// A deterministic Merkle tree of `size` leaves, leaf `index` being `leaf` (the others made up):
// its root and the audit path of `index` (RFC 6962 section 2.1), for tests of inclusion proofs.
struct MerkleFixture {
  std::string root;
  std::vector<std::string> path;
};
MerkleFixture merkle_fixture(const std::string& leaf, std::int64_t index, std::int64_t size);

}  // namespace kernelhub::sigstore::testing
