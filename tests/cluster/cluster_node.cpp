// One cluster node in a small process, for tests/python/test_cluster_*.py and bench/cluster/: the
// fetch stage of get_kernel (resolve, list, select, download, verify; kernelhub/fetch/internal/fetch.hpp) with
// the same code, without LibTorch. Starting LibTorch alone costs ~0.4 s of CPU a process, which
// for 64 simulated nodes on a 2-core machine is most of the run; the load itself is what the
// torchrun tests cover. The machine is uname's, with the KERNELHUB_* overrides (KERNELHUB_TORCH,
// KERNELHUB_BACKEND, ...) set by the harness for the variant it published.
//
//   cluster_node ORG/NAME (--version N | --revision R | --lockfile F)
//
// Prints one JSON line: {"commit", "variant", "path", "requests", "seconds"}, or {"error": {"code",
// "message"}} and exits 1.
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "kernelhub/fetch/internal/fetch.hpp"

namespace {

int fail(kernelhub::ErrorCode code, const std::string& message) {
  const nlohmann::json out = {{"error", {{"code", kernelhub::to_string(code)}, {"message", message}}}};
  std::printf("%s\n", out.dump().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kernelhub;
  const auto started = std::chrono::steady_clock::now();
  if (argc != 4)
    return fail(ErrorCode::kInvalidArgument,
                "usage: cluster_node ORG/NAME (--version N | --revision R | --lockfile F)");
  auto repo = client::RepoId::parse(argv[1]);
  if (!repo) return fail(repo.error().code, repo.error().message);
  FetchRequest request;
  request.source = *repo;
  const std::string option = argv[2], value = argv[3];
  if (option == "--version") {
    request.version = std::stoi(value);
  } else if (option == "--revision") {
    request.revision = value;
  } else if (option == "--lockfile") {
    request.lockfile = value;
  } else {
    return fail(ErrorCode::kInvalidArgument, "unknown option `" + option + "`");
  }
  const EnvironmentSource env = process_environment();  // the node's, as a program's entry point reads it
  auto environment = resolver::Environment::detect(resolver::TorchRuntime{}, env);
  if (!environment) return fail(environment.error().code, environment.error().message);
  auto fetched = fetch_variant(request, FetchContext{*std::move(environment), env});
  if (!fetched) return fail(fetched.error().code, fetched.error().message);
  const nlohmann::json out = {
      {"commit", fetched->revision},
      {"variant", fetched->variant},
      {"path", fetched->path.string()},
      {"requests", fetched->timings.requests},
      {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
