#include "kernelhub/sigstore/internal/checkpoint.hpp"

#include <catch2/catch.hpp>

#include "kernelhub/base/internal/base64.hpp"
#include "kernelhub/sigstore/internal/trusted_material.hpp"
#include "test_instance.hpp"

namespace kernelhub::sigstore {
namespace {

using nlohmann::json;

struct Fixture {
  testing::TestInstance instance;
  TrustedRoot root = *TrustedRoot::parse(instance.trusted_root().dump());
  const LogKey& rekor_v1 = trusted_material(root).transparency_logs[0];
  const LogKey& rekor_v2 = trusted_material(root).transparency_logs[1];

  // The checkpoint of a fresh bundle, and the tree size and root hash its proof states.
  struct Signed {
    std::string envelope;
    std::int64_t tree_size;
    std::string root_hash;
  };
  Signed checkpoint(const testing::BundleOptions& options = {}) const {
    const json proof = instance.bundle(options)["verificationMaterial"]["tlogEntries"][0]["inclusionProof"];
    return {proof["checkpoint"]["envelope"], std::stoll(proof["treeSize"].get<std::string>()),
            *base64_decode(proof["rootHash"].get<std::string>())};
  }
};

// A witness's timestamped cosignature line (C2SP tlog-cosignature), by a key the root does not know.
const std::string kWitnessLine =
    "\xe2\x80\x94 witness.example "
    "Z/euoAAAAABqBM+21mV7JbHwWmLP20ZSpNWneHMkITOPopt+Vj1MoJSILqOIPpx93pbRfA0U+Eq5IiJjEUhG1JwGhPCJEUT5yDcFDg==\n";

TEST_CASE("a Rekor v1 checkpoint parses and verifies with its log's key") {
  const Fixture f;
  const auto signed_checkpoint = f.checkpoint();
  auto checkpoint = parse_checkpoint(signed_checkpoint.envelope);
  REQUIRE(checkpoint);
  CHECK(checkpoint->origin == "rekor.test.example - 1234567890");
  CHECK(checkpoint->tree_size == 11);
  CHECK(checkpoint->root_hash == signed_checkpoint.root_hash);
  REQUIRE(checkpoint->signatures.size() == 1);
  CHECK(checkpoint->signatures[0].name == "rekor.test.example");
  CHECK(verify_checkpoint(*checkpoint, f.rekor_v1, 11, signed_checkpoint.root_hash));
}

TEST_CASE(
    "a Rekor v2 checkpoint (Ed25519, origin = the log's host) verifies, and witness lines are ignored wherever they "
    "stand") {
  const Fixture f;
  testing::BundleOptions options;
  options.log = testing::LogKind::kRekorV2;
  const auto signed_checkpoint = f.checkpoint(options);
  auto plain = parse_checkpoint(signed_checkpoint.envelope);
  REQUIRE(plain);
  CHECK(plain->origin == "log2026.rekor.test.example");
  CHECK(verify_checkpoint(*plain, f.rekor_v2, 11, signed_checkpoint.root_hash));
  auto cosigned = parse_checkpoint(signed_checkpoint.envelope + kWitnessLine);
  REQUIRE(cosigned);
  CHECK(verify_checkpoint(*cosigned, f.rekor_v2, 11, signed_checkpoint.root_hash));
  const auto blank = signed_checkpoint.envelope.find("\n\n");
  auto witness_first = parse_checkpoint(signed_checkpoint.envelope.substr(0, blank + 2) + kWitnessLine +
                                        signed_checkpoint.envelope.substr(blank + 2));
  REQUIRE(witness_first);
  CHECK(verify_checkpoint(*witness_first, f.rekor_v2, 11, signed_checkpoint.root_hash));
}

TEST_CASE("a checkpoint of another origin, another key, another tree or root is refused, saying which") {
  const Fixture f;
  testing::BundleOptions other_origin;
  other_origin.checkpoint_origin = "rekor.elsewhere.example - 1";
  const auto elsewhere = f.checkpoint(other_origin);
  auto refused = verify_checkpoint(*parse_checkpoint(elsewhere.envelope), f.rekor_v1, 11, elsewhere.root_hash);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::kBadSignature);
  CHECK_THAT(refused.error().message,
             Catch::Contains("is for the log `rekor.elsewhere.example - 1`, not `rekor.test.example`"));

  const auto good = f.checkpoint();
  const auto checkpoint = *parse_checkpoint(good.envelope);
  CHECK_THAT(verify_checkpoint(checkpoint, f.rekor_v2, 11, good.root_hash).error().message,
             Catch::Contains("carries no signature of the log `log2026.rekor.test.example`"));
  CHECK_THAT(verify_checkpoint(checkpoint, f.rekor_v1, 12, good.root_hash).error().message,
             Catch::Contains("is for a tree of 11 leaves; the inclusion proof is for 12"));
  CHECK_THAT(verify_checkpoint(checkpoint, f.rekor_v1, 11, std::string(32, 'x')).error().message,
             Catch::Contains("commits to the root hash"));
  // The log's name and key hint, with a signature that is not the log's.
  auto forged = checkpoint;
  forged.signatures[0].signature[10] = static_cast<char>(forged.signatures[0].signature[10] ^ 1);
  CHECK_THAT(verify_checkpoint(forged, f.rekor_v1, 11, good.root_hash).error().message,
             Catch::Contains("signature of `rekor.test.example` does not verify"));
  // The text changed after signing.
  auto edited = checkpoint;
  edited.note += "extra\n";
  CHECK_THAT(verify_checkpoint(edited, f.rekor_v1, 11, good.root_hash).error().message,
             Catch::Contains("does not verify"));
}

TEST_CASE("malformed checkpoints are refused as corrupt") {
  const Fixture f;
  const std::string good = f.checkpoint().envelope;
  const auto blank = good.find("\n\n");
  const std::string note = good.substr(0, blank + 1);
  const std::string signatures = good.substr(blank + 2);
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {note, "has no blank line"},
           {note + "\n", "does not end its signature lines with a newline"},
           {note + "\n" + signatures.substr(0, signatures.size() - 1), "does not end its signature lines"},
           {note + "\nnot a signature\n", "has a line that is not a signature"},
           {note + "\n\xe2\x80\x94 name\n", "is not `\xe2\x80\x94 <name> <signature>`"},
           {note + "\n\xe2\x80\x94 name AAAA\n", "is not base64 of a key hint and a signature"},
           {"origin\n11\nnot-a-hash\n\n" + signatures, "is not the base64 of a 32-byte root hash"},
           {"origin\n11\nAAAA\n\n" + signatures, "is not the base64 of a 32-byte root hash"},
           {"origin\nsize\nAAAA\n\n" + signatures, "is not a tree size"},
           {"origin\n11\n\n" + signatures, "fewer than three lines"},
       }) {
    auto parsed = parse_checkpoint(text);
    INFO(message);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().code == ErrorCode::kCorruptFile);
    CHECK_THAT(parsed.error().message, Catch::Contains(message));
  }
}

TEST_CASE("a log's checkpoint name is its base URL's host and port") {
  CHECK(log_name("https://rekor.sigstore.dev") == "rekor.sigstore.dev");
  CHECK(log_name("http://localhost:8000/api/v1") == "localhost:8000");
  CHECK(log_name("https://user@log.example/") == "log.example");
  CHECK(log_name("") == "");
}

}  // namespace
}  // namespace kernelhub::sigstore
