// libFuzzer target: sigstore::Bundle::parse (sigstore/bundle.hpp), then verify() against the
// embedded public-good root. Oracles: an accepted bundle keeps the shape rules parse() promises
// (signing material present, v0.2+ entries with a checkpoint, no negative index), and verify()
// never accepts a fuzzed bundle over a fuzzed artifact (nothing here can forge a signature).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_require.hpp"
#include "kernelhub/sigstore/bundle.hpp"
#include "kernelhub/sigstore/verify.hpp"

using kernelhub::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kernelhub::sigstore;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto bundle = Bundle::parse(bytes);
  if (!bundle) return 0;
  require(bundle->has_certificate() || bundle->public_key_hint.has_value());
  for (const auto& entry : bundle->tlog_entries) {
    require(entry.log_index >= 0);
    if (bundle->version != BundleVersion::k0_1) require(entry.inclusion_proof && entry.inclusion_proof->checkpoint);
  }
  const auto artifact = Artifact::bytes("kernelhub fuzz artifact");
  require(!verify(*bundle, artifact, TrustedRoot::public_good()).has_value());
  VerifyOptions keyed;
  keyed.public_key_pem =
      "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAExRRST79+PsrRBnGAI4cMu6Omz2Jh\n"
      "fwlMW+gIutNKVRaMyS4rQKvgngc5p8UbLj55pVHhIoAxi/SRgURZI0J3Xw==\n-----END PUBLIC KEY-----\n";
  keyed.allow_no_tlog_for_keys = true;
  require(!verify(*bundle, artifact, TrustedRoot::public_good(), keyed).has_value());
  return 0;
}
