// `kernelhub serve`: run the Hub-compatible server (kernelhub/server/internal/server.hpp) until SIGINT or
// SIGTERM. Prints the URL it listens on, so scripts and tests using `--port 0` can read it (with
// --json as one JSON line, flushed as soon as it listens).
#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "command.hpp"
#include "kernelhub/server/internal/server.hpp"
#include "torch_commands.hpp"

namespace kernelhub::cli {
namespace {

int run_serve(server::ServerOptions options, bool json, const CLI::App& app) {
  if (options.port > 65535) return usage_error(app, "--port must be 0..65535");
  std::erase(options.trusted_publishers, std::string());  // `a,,b` names two
  // Block the stop signals in every thread (workers inherit the mask) and wait for them here.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  auto server = server::Server::create(options);
  if (!server) return fail("kernelhub serve", server.error(), json);
  if (auto started = (*server)->start(); !started) return fail("kernelhub serve", started.error(), json);
  if (json) {
    std::printf("%s\n", nlohmann::json{{"url", (*server)->public_url()},
                                       {"storage_url", (*server)->storage_url()},
                                       {"root", options.root.string()}}
                            .dump()
                            .c_str());
  } else {
    std::printf("kernelhub serve: listening on %s (storage %s, root %s)\n", (*server)->public_url().c_str(),
                (*server)->storage_url().c_str(), options.root.c_str());
    std::printf("HF_ENDPOINT=%s\n", (*server)->public_url().c_str());
  }
  std::fflush(stdout);
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::fprintf(stderr, "kernelhub serve: stopping (signal %d)\n", signal_number);
  (*server)->stop();
  return kExitOk;
}

CommandRun define_serve(CLI::App& app) {
  auto options = std::make_shared<server::ServerOptions>();
  auto json = std::make_shared<bool>(false);
  app.description(
      "Serve the Hugging Face Hub API for the kernel and model repos stored under DIR.\n"
      "Point clients at it with HF_ENDPOINT=<printed URL> (and HF_HUB_DISABLE_XET=1).");
  app.add_option("--root", options->root, "store folder (created if missing)")->option_text("DIR")->required();
  app.add_option("--host", options->host, "address to listen on (default 127.0.0.1)")->option_text("ADDR");
  app.add_option("--port", options->port, "port, 0 picks a free one (default 0); the URL is printed on stdout")
      ->option_text("N")
      ->transform(whole_number());
  app.add_option("--tokens", options->tokens_file,
                 "{\"tokens\": {\"<token>\": {\"user\", \"orgs\", \"write\"}}}; without it, nobody can write")
      ->option_text("FILE");
  app.add_option("--public-url", options->public_url, "base URL clients use (default http://HOST:PORT)")
      ->option_text("URL");
  app.add_option("--storage-url", options->storage_url,
                 "base URL of LFS storage; must be another host name than the public URL (default: localhost "
                 "<-> 127.0.0.1 on the same port)")
      ->option_text("URL");
  app.add_option("--trusted-publisher", options->trusted_publishers, "organizations with trustedKernelPublisher = true")
      ->option_text("ORG[,ORG...]")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  auto size = [&](const char* name, auto& field, const char* what) {
    app.add_option(name, field, what)->option_text("N")->transform(whole_number());
  };
  size("--lfs-threshold", options->lfs_threshold, "files of at least N bytes are LFS (default 10485760)");
  size("--max-body", options->max_body_bytes, "largest JSON request body, and NDJSON commit line (default 67108864)");
  size("--max-commit-body", options->max_commit_body_bytes,
       "largest NDJSON commit, read line by line (default 4294967296)");
  size("--multipart-chunk", options->multipart_chunk_bytes, "LFS uploads above N bytes use multipart parts of N bytes");
  size("--tree-page-size", options->tree_page_size, "entries per tree page (default 1000)");
  size("--threads", options->threads, "worker threads; each open connection holds one (default 128)");
  size("--ref-max-age", options->ref_max_age_seconds,
       "seconds a shared cache may keep an answer about a branch or tag (default 10); answers about a commit are "
       "kept for good");
  size("--fault-cut-after", options->fault_cut_storage_after_bytes,
       "testing: cut the first storage download of each object after N bytes");
  size("--fault-cut-upload-after", options->fault_cut_upload_after_bytes,
       "testing: the first upload longer than N bytes is not stored and its connection is dropped (once)");
  size("--max-lfs-object", options->max_lfs_object_bytes, "largest LFS object accepted (default 68719476736)");
  for (const char* positive : {"--multipart-chunk", "--tree-page-size", "--threads"}) {
    app.get_option(positive)->check(CLI::PositiveNumber);
  }
  app.add_flag("--log-requests", options->log_requests, "one line per request on stderr");
  app.add_flag("--json", *json,
               "once listening, print one JSON line: {\"url\", \"storage_url\", \"root\"} (on failure: "
               "{\"error\": {\"code\", \"message\"}})");
  return [options, json, &app] { return run_serve(*options, *json, app); };
}

}  // namespace

KERNELHUB_COMMAND("serve", kServeSummary, &define_serve);

}  // namespace kernelhub::cli
