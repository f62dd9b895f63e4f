// libFuzzer target: sigstore::TrustedRoot::parse (sigstore/trusted_root.hpp). Oracle: an accepted
// root has every entry's validity start at or before its end, every authority at least one
// certificate, and describe() runs.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_require.hpp"
#include "kernelhub/sigstore/trusted_root.hpp"

using kernelhub::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kernelhub::sigstore;
  auto root = TrustedRoot::parse(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!root) return 0;
  for (const auto* logs : {&root->transparency_logs(), &root->ct_logs()}) {
    for (const auto& log : *logs) require(!log.valid_for.end || log.valid_for.start <= *log.valid_for.end);
  }
  for (const auto* authorities : {&root->certificate_authorities(), &root->timestamp_authorities()}) {
    for (const auto& authority : *authorities) require(!authority.certificates.empty());
  }
  require(!root->describe().empty());
  return 0;
}
