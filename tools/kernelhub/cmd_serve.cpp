// `kernelhub serve`: run the Hub-compatible server (kernelhub/server/server.hpp) until SIGINT or
// SIGTERM. Prints the URL it listens on, so scripts and tests using `--port 0` can read it.
#include <csignal>
#include <cstdio>
#include <sstream>
#include <string>

#include "arguments.hpp"
#include "command.hpp"
#include "kernelhub/server/server.hpp"

namespace kernelhub::cli {
namespace {

constexpr const char* kUsage =
    "usage: kernelhub serve --root DIR [--host 127.0.0.1] [--port N] [--tokens FILE]\n"
    "                       [--public-url URL] [--storage-url URL] [--trusted-publisher ORG[,ORG...]]\n"
    "                       [--lfs-threshold BYTES] [--max-body BYTES] [--max-commit-body BYTES]\n"
    "                       [--multipart-chunk BYTES]\n"
    "                       [--tree-page-size N] [--threads N] [--log-requests]\n\n"
    "Serve the Hugging Face Hub API for the kernel and model repos stored under DIR.\n"
    "Point clients at it with HF_ENDPOINT=<printed URL> (and HF_HUB_DISABLE_XET=1).\n\n"
    "  --root DIR            store folder (created if missing)\n"
    "  --host ADDR           address to listen on (default 127.0.0.1)\n"
    "  --port N              port, 0 picks a free one (default 0); the URL is printed on stdout\n"
    "  --tokens FILE         {\"tokens\": {\"<token>\": {\"user\", \"orgs\", \"write\"}}}; without it,\n"
    "                        nobody can write\n"
    "  --public-url URL      base URL clients use (default http://HOST:PORT)\n"
    "  --storage-url URL     base URL of LFS storage; must be another host name than the public\n"
    "                        URL (default: localhost <-> 127.0.0.1 on the same port)\n"
    "  --trusted-publisher   organizations with trustedKernelPublisher = true\n"
    "  --lfs-threshold N     files of at least N bytes are LFS (default 10485760)\n"
    "  --max-body N          largest JSON request body, and NDJSON commit line (default 67108864)\n"
    "  --max-commit-body N   largest NDJSON commit, read line by line (default 4294967296)\n"
    "  --multipart-chunk N   LFS uploads above N bytes use multipart parts of N bytes\n"
    "  --tree-page-size N    entries per tree page (default 1000)\n"
    "  --threads N           worker threads; each open connection holds one (default 128)\n"
    "  --fault-cut-after N   testing: cut the first storage download of each object after N bytes\n"
    "  --fault-cut-upload-after N  testing: the first upload longer than N bytes is not stored\n"
    "                        and its connection is dropped (once)\n"
    "  --max-lfs-object N    largest LFS object accepted (default 68719476736)\n"
    "  --log-requests        one line per request on stderr\n";

bool parse_number(const std::optional<std::string>& text, std::uint64_t& out, const char* name) {
  if (!text) return true;
  try {
    std::size_t used = 0;
    out = std::stoull(*text, &used);
    if (used == text->size()) return true;
  } catch (const std::exception&) {
  }
  std::fprintf(stderr, "kernelhub serve: %s needs a non-negative integer, got `%s`\n", name, text->c_str());
  return false;
}

int run_serve(std::span<const std::string> args) {
  ArgumentSpec spec;
  spec.flags = {"--log-requests"};
  spec.options = {"--root",
                  "--host",
                  "--port",
                  "--tokens",
                  "--public-url",
                  "--storage-url",
                  "--trusted-publisher",
                  "--lfs-threshold",
                  "--max-body",
                  "--max-commit-body",
                  "--multipart-chunk",
                  "--tree-page-size",
                  "--threads",
                  "--fault-cut-after",
                  "--fault-cut-upload-after",
                  "--max-lfs-object"};
  const Arguments parsed = parse_arguments(args, spec);
  if (parsed.has("--help")) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (!parsed.error.empty() || !parsed.positionals.empty()) {
    std::fprintf(stderr, "kernelhub serve: %s\n%s",
                 parsed.error.empty() ? "unexpected positional argument" : parsed.error.c_str(), kUsage);
    return kExitUsage;
  }
  server::ServerOptions options;
  if (!parsed.option("--root")) {
    std::fprintf(stderr, "kernelhub serve: --root DIR is required\n%s", kUsage);
    return kExitUsage;
  }
  options.root = *parsed.option("--root");
  if (auto host = parsed.option("--host")) options.host = *host;
  if (auto tokens = parsed.option("--tokens")) options.tokens_file = *tokens;
  if (auto url = parsed.option("--public-url")) options.public_url = *url;
  if (auto url = parsed.option("--storage-url")) options.storage_url = *url;
  if (auto orgs = parsed.option("--trusted-publisher")) {
    std::stringstream list(*orgs);
    for (std::string org; std::getline(list, org, ',');) {
      if (!org.empty()) options.trusted_publishers.push_back(org);
    }
  }
  options.log_requests = parsed.has("--log-requests");
  std::uint64_t port = 0, page = options.tree_page_size, threads = options.threads;
  if (!parse_number(parsed.option("--port"), port, "--port") ||
      !parse_number(parsed.option("--lfs-threshold"), options.lfs_threshold, "--lfs-threshold") ||
      !parse_number(parsed.option("--max-body"), options.max_body_bytes, "--max-body") ||
      !parse_number(parsed.option("--max-commit-body"), options.max_commit_body_bytes, "--max-commit-body") ||
      !parse_number(parsed.option("--multipart-chunk"), options.multipart_chunk_bytes, "--multipart-chunk") ||
      !parse_number(parsed.option("--tree-page-size"), page, "--tree-page-size") ||
      !parse_number(parsed.option("--threads"), threads, "--threads") ||
      !parse_number(parsed.option("--fault-cut-after"), options.fault_cut_storage_after_bytes, "--fault-cut-after") ||
      !parse_number(parsed.option("--fault-cut-upload-after"), options.fault_cut_upload_after_bytes,
                    "--fault-cut-upload-after") ||
      !parse_number(parsed.option("--max-lfs-object"), options.max_lfs_object_bytes, "--max-lfs-object")) {
    return kExitUsage;
  }
  if (port > 65535 || page == 0 || threads == 0 || options.multipart_chunk_bytes == 0) {
    std::fprintf(stderr, "kernelhub serve: --port must be 0..65535; page size, threads and chunk must be > 0\n");
    return kExitUsage;
  }
  options.port = static_cast<int>(port);
  options.tree_page_size = page;
  options.threads = threads;

  // Block the stop signals in every thread (workers inherit the mask) and wait for them here.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  auto server = server::Server::create(options);
  if (!server) {
    std::fprintf(stderr, "kernelhub serve: error: %s\n", server.error().message.c_str());
    return kExitFailure;
  }
  if (auto started = (*server)->start(); !started) {
    std::fprintf(stderr, "kernelhub serve: error: %s\n", started.error().message.c_str());
    return kExitFailure;
  }
  std::printf("kernelhub serve: listening on %s (storage %s, root %s)\n", (*server)->public_url().c_str(),
              (*server)->storage_url().c_str(), options.root.c_str());
  std::printf("HF_ENDPOINT=%s\n", (*server)->public_url().c_str());
  std::fflush(stdout);
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::fprintf(stderr, "kernelhub serve: stopping (signal %d)\n", signal_number);
  (*server)->stop();
  return kExitOk;
}

}  // namespace

KERNELHUB_COMMAND("serve", "run a Hub-compatible server for kernel and model repos", &run_serve);

}  // namespace kernelhub::cli
