// kernelhub get ORG/NAME [--revision R | --version N] [--backend B] [--json]: resolve, verify and
// load a kernel in this process, and list its ops with the time each step took. Built into
// kernelhub-get, which links LibTorch; `kernelhub get` runs it (kernelhub/torch_commands.hpp).
#include <chrono>
#include <cstdio>
#include <string>

#include "command.hpp"
#include "decision_json.hpp"
#include "kernelhub/base/process_io.hpp"
#include "kernelhub/kernelhub.hpp"
#include "torch_commands.hpp"

namespace kernelhub::cli {

namespace {

// How much of the cache a load looked at: what this process read meanwhile (-1: unknown).
long long bytes_read_since(std::optional<std::uint64_t> before) {
  const auto now = bytes_read_by_process();
  return before && now ? static_cast<long long>(*now - *before) : -1;
}

// The kernels `kernel` depends on, each with its own, as loaded (metadata.json `kernel-depends`).
nlohmann::json dependencies_json(const Kernel& kernel) {
  nlohmann::json out = nlohmann::json::array();
  for (const Kernel& dependency : kernel.dependencies()) {
    out.push_back({{"name", dependency.metadata().name},
                   {"variant", dependency.variant()},
                   {"revision", dependency.revision()},
                   {"path", dependency.path().string()},
                   {"namespace", dependency.ns()},
                   {"dependencies", dependencies_json(dependency)}});
  }
  return out;
}

void print_dependencies(const Kernel& kernel, const std::string& indent) {
  for (const Kernel& dependency : kernel.dependencies()) {
    std::printf("%s%s (%s, %s)\n", indent.c_str(), dependency.metadata().name.c_str(), dependency.variant().c_str(),
                dependency.revision().c_str());
    print_dependencies(dependency, indent + "  ");
  }
}

struct GetArguments {
  std::string repo;
  GetKernelOptions options;
  std::optional<std::string> lockfile;
  bool json = false;
};

int run_get(const GetArguments& args) {
  GetKernelOptions options = args.options;
  if (args.lockfile) options.lockfile = *args.lockfile;
  const auto read_before = bytes_read_by_process();
  const auto start = std::chrono::steady_clock::now();
  try {
    const Kernel kernel = get_kernel(args.repo, options);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    say_fallbacks("kernelhub get", kernel.fallbacks());
    if (args.json) {
      nlohmann::json ops = nlohmann::json::array();
      for (const auto& op : kernel.ops()) ops.push_back({{"name", op.name}, {"schema", op.schema}});
      nlohmann::json decisions = nlohmann::json::array();
      for (const auto& d : kernel.decisions()) decisions.push_back(decision_to_json(d));
      nlohmann::json j = {{"repo", args.repo},
                          {"variant", kernel.variant()},
                          {"revision", kernel.revision()},
                          {"path", kernel.path().string()},
                          {"namespace", kernel.ns()},
                          {"ops", ops},
                          {"dependencies", dependencies_json(kernel)},
                          {"decisions", decisions},
                          {"requests", kernel.timings().requests},
                          {"fallbacks", kernel.fallbacks()},
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
    std::printf("kernel:    %s\n", args.repo.c_str());
    std::printf("variant:   %s\n", kernel.variant().c_str());
    std::printf("revision:  %s\n", kernel.revision().c_str());
    std::printf("path:      %s\n", kernel.path().c_str());
    std::printf("namespace: %s\n", kernel.ns().c_str());
    std::printf("ops:\n");
    for (const auto& op : kernel.ops()) std::printf("  %s\n", op.schema.c_str());
    if (!kernel.dependencies().empty()) {
      std::printf("depends on (loaded first):\n");
      print_dependencies(kernel, "  ");
    }
    const LoadTimings& t = kernel.timings();
    std::printf(
        "timings:   resolve %.1f ms, download %.1f ms (%d requests), verify %.1f ms (%.1f MB hashed), "
        "load %.1f ms\n",
        t.resolve * 1e3, t.download * 1e3, t.requests, t.verify * 1e3, static_cast<double>(t.bytes_hashed) / 1e6,
        t.load * 1e3);
    std::printf("loaded in: %.1f ms\n", ms);
    return kExitOk;
  } catch (const NotFoundError& e) {
    return fail("kernelhub get", Error{e.code(), e.what(), e.missing()}, args.json);
  } catch (const KernelhubError& e) {
    return fail("kernelhub get", Error{e.code(), e.what()}, args.json);
  }
}

CommandRun define_get(CLI::App& app) {
  auto args = std::make_shared<GetArguments>();
  GetKernelOptions& options = args->options;
  app.description(
      "Resolve the variant of ORG/NAME that runs here, verify its files and load it into this\n"
      "process, then list its ops and the load time. LOCAL_KERNELS=org/name=/path loads a local\n"
      "kernel directory instead of the Hub.");
  app.add_option("ORG/NAME", args->repo, "the kernel repo")->required();
  // Which of revision, version and lockfile may go together is get_kernel's to say (its errors
  // name the conflict).
  app.add_option("--revision", options.revision, "branch, tag or commit")->option_text("R");
  app.add_option("--version", options.version, "major version (branch vN)")
      ->option_text("N")
      ->transform(whole_number());
  app.add_option("--lockfile", args->lockfile,
                 "load the commit locked in F (kernels.lock, see `kernelhub lock`) and check the variant's locked "
                 "hash")
      ->option_text("F");
  app.add_option("--backend", options.backend, "cpu, or the backend torch was built for")->option_text("B");
  app.add_flag("--trust-remote-code", options.trust_remote_code,
               "load a kernel whose publisher the Hub does not mark as trusted");
  app.add_flag("--require-signature", options.require_signature,
               "refuse a variant without a signature by a trusted key (docs/SIGNING.md; with a key in "
               "KERNELHUB_TRUSTED_KEYS for the repo or org, always checked)");
  app.add_flag("--offline", options.offline, "no network: only what the cache holds (also HF_HUB_OFFLINE=1)");
  app.add_flag("--json", args->json,
               "print one JSON object (on failure: {\"error\": {\"code\", \"message\"}}; the exit status says "
               "the kind, see `kernelhub --help`)");
  return [args] { return run_get(*args); };
}

}  // namespace

KERNELHUB_COMMAND("get", kGetSummary, &define_get);

}  // namespace kernelhub::cli
