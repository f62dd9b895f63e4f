// The cost of verifying one Sigstore bundle (bench/sigstore/README.md): cold (parse the trusted
// root and the bundle, then verify), warm (verify against a root parsed once), and re-checking a
// policy on a signer kept from an earlier verification, from the Signer itself and from the
// certificate's DER alone (what a cache would store).
//
//   sigstore_bench BUNDLE ARTIFACT [TRUSTED_ROOT] [--identity SAN --issuer URL] [--iterations N]
//
// Prints one JSON object: the minimum, median and p90 of each, in microseconds.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/sigstore/sigstore.hpp"

namespace {

using namespace kernelhub;
using namespace kernelhub::sigstore;

struct Timing {
  double min_us;  // the run least disturbed by other processes on a shared machine
  double median_us;
  double p90_us;
};

Timing measure(int iterations, const std::function<void()>& run) {
  run();  // once to warm caches and lazy initialisation
  std::vector<double> samples;
  for (int i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    samples.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(samples.begin(), samples.end());
  return {samples.front(), samples[samples.size() / 2], samples[samples.size() * 9 / 10]};
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "sigstore_bench: %s\n", what.c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> positional;
  std::string identity, issuer;
  int iterations = 200;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--identity" && i + 1 < argc) {
      identity = argv[++i];
    } else if (arg == "--issuer" && i + 1 < argc) {
      issuer = argv[++i];
    } else if (arg == "--iterations" && i + 1 < argc) {
      iterations = std::max(1, std::atoi(argv[++i]));
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() < 2) die("usage: sigstore_bench BUNDLE ARTIFACT [TRUSTED_ROOT] [--identity SAN --issuer URL]");
  auto bundle_text = read_file(positional[0]);
  auto artifact_bytes = read_file(positional[1]);
  if (!bundle_text || !artifact_bytes) die("cannot read the bundle or the artifact");
  std::string root_text;
  if (positional.size() > 2) {
    auto text = read_file(positional[2]);
    if (!text) die("cannot read the trusted root");
    root_text = *text;
  }
  const auto root_of = [&]() {
    auto parsed = root_text.empty() ? Result<TrustedRoot>(TrustedRoot::public_good()) : TrustedRoot::parse(root_text);
    if (!parsed) die(parsed.error().message);
    return *parsed;
  };
  const TrustedRoot root = root_of();
  const Artifact artifact = Artifact::bytes(*artifact_bytes);
  auto bundle = Bundle::parse(*bundle_text);
  if (!bundle) die(bundle.error().message);
  auto verified = verify(*bundle, artifact, root);
  if (!verified) die("the bundle does not verify: " + verified.error().message);
  Policy policy = Policy::kernels_default();
  if (!identity.empty()) policy = IdentityRule{.subject_alternative_name = identity, .oidc_issuer = issuer};
  const bool policy_holds = check_policy(policy, verified->signer).has_value();
  const auto& signer = verified->signer;
  const std::string der =
      signer.is_certificate() ? std::get<CertificateIdentity>(signer.identity).certificate_der : std::string();

  const Timing cold = measure(iterations, [&] {
    // The embedded root is parsed once per process; a root from a file is parsed here each time.
    const TrustedRoot fresh = root_of();
    auto b = Bundle::parse(*bundle_text);
    if (!verify(*b, artifact, fresh)) die("verification failed");
  });
  const Timing warm = measure(iterations, [&] {
    if (!verify(*bundle, artifact, root)) die("verification failed");
  });
  const Timing recheck = measure(iterations * 50, [&] { (void)check_policy(policy, signer); });
  const Timing recheck_der = measure(iterations * 10, [&] {
    if (der.empty()) return;
    (void)check_policy(policy, *Signer::from_certificate_der(der));
  });
  const auto line = [](const char* name, const Timing& t, const char* end) {
    std::printf(" \"%s\": {\"min\": %.2f, \"median\": %.2f, \"p90\": %.2f}%s\n", name, t.min_us, t.median_us, t.p90_us,
                end);
  };
  std::printf("{\"bundle\": \"%s\", \"iterations\": %d, \"policy_holds\": %s,\n", positional[0].c_str(), iterations,
              policy_holds ? "true" : "false");
  line("cold_parse_root_bundle_verify_us", cold, ",");
  line("warm_verify_us", warm, ",");
  line("policy_recheck_cached_signer_us", recheck, ",");
  line("policy_recheck_from_certificate_der_us", recheck_der, "}");
  return 0;
}
