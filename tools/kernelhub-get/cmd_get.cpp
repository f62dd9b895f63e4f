// kernelhub get ORG/NAME [--revision R | --version N] [--backend B] [--json]: resolve, verify and
// load a torch kernel in this process, and list its ops with the time each step took. Built into
// kernelhub-get, which links LibTorch; `kernelhub get` runs it for torch builds (kernelhub/cmd_get.cpp
// loads tvm-ffi builds itself).
#include <chrono>
#include <cstdio>
#include <string>

#include "command.hpp"
#include "decision_json.hpp"
#include "get_options.hpp"
#include "kernelhub/base/internal/process_io.hpp"
#include "kernelhub/client/progress.hpp"
#include "kernelhub/internal/load.hpp"
#include "kernelhub/kernelhub.hpp"
#include "torch_commands.hpp"

namespace kernelhub::cli {

namespace {

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
    std::printf("%s%s\n", indent.c_str(),
                printable(dependency.metadata().name + " (" + dependency.variant() + ", " + dependency.revision() + ")",
                          Lines::kEscaped)
                    .c_str());
    print_dependencies(dependency, indent + "  ");
  }
}

int run_get(const GetArguments& args) {
  const auto read_before = bytes_read_by_process();
  const auto start = std::chrono::steady_clock::now();
  // A download draws its progress line on a terminal, as `kernelhub download` does.
  client::ProgressReporter progress = client::ProgressReporter::for_terminal(args.json);
  GetKernelOptions options = get_kernel_options(args);
  options.progress = &progress;
  try {
    auto got = get_kernel_result(args.repo, options, process_environment());
    if (!got) return fail("kernelhub get", got.error(), args.json);
    const Kernel& kernel = *got;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    say_fallbacks("kernelhub get", kernel.fallbacks());
    if (args.json) {
      nlohmann::json ops = nlohmann::json::array();
      for (const auto& op : kernel.ops()) ops.push_back({{"name", op.name}, {"schema", op.schema}});
      nlohmann::json decisions = nlohmann::json::array();
      for (const auto& d : kernel.decisions()) decisions.push_back(decision_to_json(d));
      nlohmann::json j = {{"repo", args.repo},
                          {"framework", "torch"},
                          {"variant", kernel.variant()},
                          {"revision", kernel.revision()},
                          {"path", kernel.path().string()},
                          {"namespace", kernel.ns()},
                          {"ops", ops},
                          {"dependencies", dependencies_json(kernel)},
                          {"decisions", decisions},
                          {"fallbacks", kernel.fallbacks()},
                          {"warnings", kernel.warnings()}};
      j.update(load_statistics_json(kernel.timings(), ms, read_before));
      std::printf("%s\n", j.dump(2).c_str());
      return kExitOk;
    }
    std::fputs(kernel_header_text(args.repo, kernel.variant(), kernel.revision(), kernel.path()).c_str(), stdout);
    std::printf("namespace: %s\n", printable(kernel.ns(), Lines::kEscaped).c_str());
    std::printf("ops:\n");
    for (const auto& op : kernel.ops()) std::printf("  %s\n", printable(op.schema, Lines::kEscaped).c_str());
    if (!kernel.dependencies().empty()) {
      std::printf("depends on (loaded first):\n");
      print_dependencies(kernel, "  ");
    }
    std::fputs(load_statistics_text(kernel.timings(), ms).c_str(), stdout);
    return kExitOk;
  } catch (const KernelhubError& e) {
    return fail("kernelhub get", Error{e.code(), e.what()}, args.json);
  }
}

CommandRun define_get(CLI::App& app) {
  auto args = std::make_shared<GetArguments>();
  add_get_options(app, *args);
  return [args] { return run_get(*args); };
}

}  // namespace

KERNELHUB_COMMAND("get", kGetSummary, &define_get);

}  // namespace kernelhub::cli
