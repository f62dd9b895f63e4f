// Server: `kernelhub serve`, a Hugging Face Hub-compatible HTTP server over a Store.
//
// It speaks the part of the Hub protocol that huggingface_hub, the `kernels` package and our
// own client use (docs/SERVER.md), for model, dataset, space
// and kernel repos:
//   HEAD|GET /{prefix}{repo}/resolve/{rev}/{path}   files; LFS files 302 to the storage host
//   GET  /api/{T}/{repo}[/revision/{rev}]          repo info
//   GET  /api/{T}/{repo}/tree/{rev}[/{path}]       listing, `recursive`, `Link` pagination
//   POST /api/{T}/{repo}/paths-info/{rev}          form or JSON
//   GET  /api/{T}/{repo}/refs                      branches, tags, converts
//   POST|DELETE /api/{T}/{repo}/branch/{name}, POST /api/{T}/{repo}/tag/{rev}, DELETE …/tag/{t}
//   POST /api/repos/create, DELETE /api/repos/delete, PUT /api/{T}/{repo}/settings
//   GET  /api/whoami-v2, GET /api/organizations/{org}/overview
//   POST /api/{T}/{repo}/preupload/{rev}, POST /{prefix}{repo}.git/info/lfs/objects/batch,
//   POST /api/{T}/{repo}/commit/{rev}              NDJSON or JSON
//   storage host: GET /lfs-storage/…, PUT /lfs-upload/…, PUT /lfs-part/…, POST /lfs-complete/…
// Errors carry the Hub's status, `X-Error-Code`, `X-Error-Message` and a JSON `{"error"}` body;
// unknown routes answer a JSON 404.
//
// Thread safety: start() and stop() from one thread; requests are served on a worker pool.
// Lifetime: the destructor stops the server and joins its threads.
#pragma once

#include <memory>
#include <string>

#include "kernelhub/base/result.hpp"
#include "kernelhub/server/internal/server_options.hpp"

namespace kernelhub::server {

class Server {
 public:
  // Opens the store and the tokens file; binds nothing yet. Errors: kInvalidArgument (bad
  // option), kNotFound/kCorruptFile (tokens file), kIo (root not writable).
  static Result<std::unique_ptr<Server>> create(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port and serves on a background thread. Errors: kIo (address in use, ...).
  Status start();
  // Stops accepting, finishes in-flight requests' sockets and joins. Idempotent.
  void stop();
  // Blocks until stop() is called (from another thread or a signal handler's helper).
  void wait();

  int port() const;
  std::string public_url() const;  // what HF_ENDPOINT should be set to
  std::string storage_url() const;

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kernelhub::server
