// ServerOptions: everything `kernelhub serve` is configured with, as plain data. The CLI fills
// it from its arguments; tests fill it directly. No environment variables are read here.
//
// Thread safety: a value type.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kernelhub::server {

struct ServerOptions {
  std::filesystem::path root;         // the store (created if missing)
  std::string host = "127.0.0.1";     // address to listen on
  int port = 0;                       // 0 = pick a free port; Server::port() says which
  std::filesystem::path tokens_file;  // empty = no tokens: everything is read-only and public
  // Base URL clients reach the Hub API at (`HF_ENDPOINT`); empty = http://<host>:<port>.
  std::string public_url;
  // Base URL of the storage host that LFS downloads are redirected to and uploads go to. It must
  // be a different host name than public_url (huggingface_hub compares host names to decide
  // whether to forward the token); empty = the other spelling of loopback (127.0.0.1 ↔
  // localhost) on the same port.
  std::string storage_url;
  std::vector<std::string> trusted_publishers;  // orgs with trustedKernelPublisher = true

  std::uint64_t lfs_threshold = 10ull * 1024 * 1024;   // files at least this big are LFS
  std::uint64_t max_body_bytes = 64ull * 1024 * 1024;  // JSON request bodies, and each NDJSON commit line
  // An NDJSON commit is read line by line, its inline files stored as their lines arrive, so only
  // one line is in memory at a time; this bounds the whole body (the bytes it may add to disk).
  std::uint64_t max_commit_body_bytes = 4ull * 1024 * 1024 * 1024;
  std::uint64_t max_lfs_object_bytes = 64ull * 1024 * 1024 * 1024;  // one LFS upload
  std::uint64_t multipart_chunk_bytes = 64ull * 1024 * 1024;        // LFS objects above use multipart
  std::size_t tree_page_size = 1000;                                // entries per /tree page
  std::size_t threads = 128;  // worker threads; an open keep-alive connection holds one
  bool log_requests = false;  // one line per request on stderr
  // How long a shared cache may keep an answer about a branch or tag (which the next publish
  // moves) before asking again; answers about a commit are kept for good (cache_policy.cpp).
  std::uint64_t ref_max_age_seconds = 10;
  // Fault injection for resume tests: the first storage GET of each LFS object is cut after this
  // many bytes (0 = never).
  std::uint64_t fault_cut_storage_after_bytes = 0;
  // Fault injection for resumable uploads: the first storage upload (a basic PUT or a multipart
  // part) longer than this many bytes is read, not stored, and its connection dropped before the
  // answer is complete, so the client sees a network cut. One-shot (0 = never).
  std::uint64_t fault_cut_upload_after_bytes = 0;
};

}  // namespace kernelhub::server
