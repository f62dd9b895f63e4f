#include "get_options.hpp"

#include <cstdio>

#include "cli_app.hpp"
#include "kernelhub/base/internal/process_io.hpp"

namespace kernelhub::cli {

void add_get_options(CLI::App& app, GetArguments& args) {
  GetKernelOptions& options = args.options;
  app.description(
      "Resolve the variant of ORG/NAME that runs here, verify its files and load it into this\n"
      "process, then list its ops (a tvm-ffi build: its functions) and the load time.\n"
      "LOCAL_KERNELS=org/name=/path loads a local kernel directory instead of the Hub.");
  app.add_option("ORG/NAME", args.repo, "the kernel repo")->required();
  // Which of revision, version and lockfile may go together is get_kernel's to say (its errors
  // name the conflict).
  app.add_option("--revision", options.revision, "branch, tag or commit")->option_text("R");
  app.add_option("--version", options.version, "major version (branch vN)")
      ->option_text("N")
      ->transform(whole_number());
  app.add_option("--lockfile", args.lockfile,
                 "load the commit locked in F (kernels.lock, see `kernelhub lock`) and check the variant's locked "
                 "hash")
      ->option_text("F");
  app.add_option("--backend", options.backend, "cpu, or the backend torch was built for")->option_text("B");
  app.add_flag("--trust-remote-code", options.trust_remote_code,
               "load a kernel whose publisher the Hub does not mark as trusted");
  app.add_flag("--require-signature", options.require_signature,
               "refuse a variant that is not signed by a signer accepted for it, instead of warning (docs/SIGNING.md; "
               "also KERNELHUB_REQUIRE_SIGNATURE=1; a repo with signers configured always is). A signature that "
               "does not verify is refused always");
  app.add_flag("--offline", options.offline, "no network: only what the cache holds (also HF_HUB_OFFLINE=1)");
  app.add_flag("--json", args.json,
               "print one JSON object (on failure: {\"error\": {\"code\", \"message\"}}; the exit status says "
               "the kind, see `kernelhub --help`)");
}

GetKernelOptions get_kernel_options(const GetArguments& args) {
  GetKernelOptions options = args.options;
  if (args.lockfile) options.lockfile = *args.lockfile;
  // On stderr, also with --json (whose object carries them too): a script sees them, a user too.
  options.on_warning = [](const std::string& warning) {
    std::fprintf(stderr, "kernelhub get: warning: %s\n", warning.c_str());
  };
  return options;
}

nlohmann::json load_statistics_json(const LoadTimings& t, double total_ms, std::optional<std::uint64_t> read_before) {
  // How much of the cache a load looked at: what this process read meanwhile (-1: unknown).
  const auto now = bytes_read_by_process();
  const long long bytes_read = read_before && now ? static_cast<long long>(*now - *read_before) : -1;
  return {{"requests", t.requests},
          {"bytes_hashed", t.bytes_hashed},
          {"bytes_read", bytes_read},
          {"seconds",
           {{"total", total_ms / 1000.0},
            {"resolve", t.resolve},
            {"download", t.download},
            {"verify", t.verify},
            {"load", t.load}}}};
}

std::string kernel_header_text(const std::string& repo, const std::string& variant, const std::string& revision,
                               const std::filesystem::path& path) {
  const auto shown = [](const std::string& text) { return printable(text, Lines::kEscaped); };
  return "kernel:    " + repo + "\nvariant:   " + shown(variant) + "\nrevision:  " + shown(revision) +
         "\npath:      " + shown(path.string()) + "\n";
}

std::string load_statistics_text(const LoadTimings& t, double total_ms) {
  char line[512];
  std::snprintf(line, sizeof line,
                "timings:   resolve %.1f ms, download %.1f ms (%d requests), verify %.1f ms (%.1f MB hashed), "
                "load %.1f ms\nloaded in: %.1f ms\n",
                t.resolve * 1e3, t.download * 1e3, t.requests, t.verify * 1e3,
                static_cast<double>(t.bytes_hashed) / 1e6, t.load * 1e3, total_ms);
  return line;
}

}  // namespace kernelhub::cli
