// kernelhub get ORG/NAME [--revision R | --version N] [--backend B] [--json]: resolve, verify and
// load a kernel in this process, and list its ops with the time each step took.
#include <chrono>
#include <cstdio>
#include <string>

#include "arguments.hpp"
#include "command.hpp"
#include "decision_json.hpp"
#include "environment_json.hpp"
#include "kernelhub/base/process_io.hpp"
#include "kernelhub/kernelhub.hpp"

namespace kernelhub::cli {

namespace {

// How much of the cache a load looked at: what this process read meanwhile (-1: unknown).
long long bytes_read_since(std::optional<std::uint64_t> before) {
  const auto now = bytes_read_by_process();
  return before && now ? static_cast<long long>(*now - *before) : -1;
}

constexpr const char* kHelp =
    "usage: kernelhub get ORG/NAME [--revision R | --version N | --lockfile F] [--backend B]\n"
    "                     [--trust-remote-code] [--require-signature] [--offline] [--json]\n\n"
    "Resolve the variant of ORG/NAME that runs here, verify its files and load it into this\n"
    "process, then list its ops and the load time. LOCAL_KERNELS=org/name=/path loads a local\n"
    "kernel directory instead of the Hub.\n\n"
    "options:\n"
    "  --revision R   branch, tag or commit\n"
    "  --version N    major version (branch vN)\n"
    "  --lockfile F   load the commit locked in F (kernels.lock, see `kernelhub lock`) and check\n"
    "                 the variant's locked hash\n"
    "  --backend B    cpu, or the backend torch was built for\n"
    "  --trust-remote-code  load a kernel whose publisher the Hub does not mark as trusted\n"
    "  --require-signature  refuse a variant without a signature by a trusted key (docs/SIGNING.md;\n"
    "                 with a key in KERNELHUB_TRUSTED_KEYS for the repo or org, always checked)\n"
    "  --offline      no network: only what the cache holds (also HF_HUB_OFFLINE=1)\n"
    "  --json         print one JSON object\n";

int run_get(std::span<const std::string> args) {
  const Arguments parsed =
      parse_arguments(args, {.flags = {"--json", "--trust-remote-code", "--offline", "--require-signature"},
                             .options = {"--revision", "--version", "--backend", "--lockfile"}});
  if (parsed.has("--help")) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  if (!parsed.error.empty() || parsed.positionals.size() != 1) {
    std::fprintf(stderr, "kernelhub get: %s\n%s",
                 parsed.error.empty() ? "expected exactly one ORG/NAME" : parsed.error.c_str(), kHelp);
    return kExitUsage;
  }
  GetKernelOptions options;
  options.revision = parsed.option("--revision");
  options.backend = parsed.option("--backend");
  options.trust_remote_code = parsed.has("--trust-remote-code");
  options.offline = parsed.has("--offline");
  options.require_signature = parsed.has("--require-signature");
  if (auto lockfile = parsed.option("--lockfile")) options.lockfile = *lockfile;
  if (auto v = parsed.option("--version")) {
    try {
      std::size_t used = 0;
      options.version = std::stoi(*v, &used);
      if (used != v->size() || *options.version < 0) throw std::invalid_argument("");
    } catch (const std::exception&) {
      std::fprintf(stderr, "kernelhub get: --version takes a non-negative integer, not `%s`\n", v->c_str());
      return kExitUsage;
    }
  }
  const auto read_before = bytes_read_by_process();
  const auto start = std::chrono::steady_clock::now();
  try {
    const Kernel kernel = get_kernel(parsed.positionals[0], options);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (parsed.has("--json")) {
      nlohmann::json ops = nlohmann::json::array();
      for (const auto& op : kernel.ops()) ops.push_back({{"name", op.name}, {"schema", op.schema}});
      nlohmann::json decisions = nlohmann::json::array();
      for (const auto& d : kernel.decisions()) decisions.push_back(decision_to_json(d));
      nlohmann::json j = {{"repo", parsed.positionals[0]},
                          {"variant", kernel.variant()},
                          {"revision", kernel.revision()},
                          {"path", kernel.path().string()},
                          {"namespace", kernel.ns()},
                          {"ops", ops},
                          {"decisions", decisions},
                          {"requests", kernel.timings().requests},
                          {"bytes_hashed", kernel.timings().bytes_hashed},
                          {"bytes_read", bytes_read_since(read_before)},
                          {"seconds",
                           {{"total", ms / 1000.0},
                            {"resolve", kernel.timings().resolve},
                            {"download", kernel.timings().download},
                            {"verify", kernel.timings().verify},
                            {"load", kernel.timings().load}}}};
      std::printf("%s\n", j.dump(2).c_str());
      return kExitOk;
    }
    std::printf("kernel:    %s\n", parsed.positionals[0].c_str());
    std::printf("variant:   %s\n", kernel.variant().c_str());
    std::printf("revision:  %s\n", kernel.revision().c_str());
    std::printf("path:      %s\n", kernel.path().c_str());
    std::printf("namespace: %s\n", kernel.ns().c_str());
    std::printf("ops:\n");
    for (const auto& op : kernel.ops()) std::printf("  %s\n", op.schema.c_str());
    const LoadTimings& t = kernel.timings();
    std::printf(
        "timings:   resolve %.1f ms, download %.1f ms (%d requests), verify %.1f ms (%.1f MB hashed), "
        "load %.1f ms\n",
        t.resolve * 1e3, t.download * 1e3, t.requests, t.verify * 1e3, static_cast<double>(t.bytes_hashed) / 1e6,
        t.load * 1e3);
    std::printf("loaded in: %.1f ms\n", ms);
    return kExitOk;
  } catch (const KernelhubError& e) {
    std::fprintf(stderr, "kernelhub get: error: %s\n", e.what());
    return kExitFailure;
  }
}

}  // namespace

KERNELHUB_COMMAND("get", "resolve, verify and load a kernel, and list its ops", &run_get);

}  // namespace kernelhub::cli
