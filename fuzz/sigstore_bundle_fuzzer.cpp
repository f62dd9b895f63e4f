// libFuzzer target: sigstore::Bundle::parse (sigstore/bundle.hpp), then verify() against the
// trusted root of a test instance (fuzz/corpus/sigstore_trusted_root/test-instance.json, compiled
// in; the seeds in fuzz/corpus/sigstore_bundle/ are that instance's bundles, so mutations reach
// every check) and against the embedded public-good root.
// Oracles: an accepted bundle keeps the shape rules parse() promises (signing material present,
// v0.2+ entries with a checkpoint, no negative index); whatever verifies over the seeds' artifact
// does not verify over another one; nothing verifies under the public-good root (no fuzzed input
// can carry its logs' signatures).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_require.hpp"
#include "kernelhub/sigstore/bundle.hpp"
#include "kernelhub/sigstore/verify.hpp"

namespace kernelhub::sigstore::embedded {
std::string_view fuzz_trusted_root();  // generated from fuzz/corpus/sigstore_trusted_root/test-instance.json
}

using kernelhub::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kernelhub::sigstore;
  static const TrustedRoot test_root = *TrustedRoot::parse(embedded::fuzz_trusted_root());
  static const Artifact seed_artifact = Artifact::bytes("{\"name\": \"relu\"}\n");
  static const Artifact other_artifact = Artifact::bytes("another artifact");
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto bundle = Bundle::parse(bytes);
  if (!bundle) return 0;
  require(bundle->has_certificate() || bundle->public_key_hint.has_value());
  for (const auto& entry : bundle->tlog_entries) {
    require(entry.log_index >= 0);
    if (bundle->version != BundleVersion::k0_1) require(entry.inclusion_proof && entry.inclusion_proof->checkpoint);
  }
  if (verify(*bundle, seed_artifact, test_root)) require(!verify(*bundle, other_artifact, test_root));
  require(!verify(*bundle, seed_artifact, TrustedRoot::public_good()));
  return 0;
}
