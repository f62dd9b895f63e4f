// Settings: the client's configuration, made from the caller's EnvironmentSource and passed down
// as data.
//
// from_env() resolves the client's variables (base/environment_variables.hpp) with
// huggingface_hub's fallback chains and truthy set; tests build a Settings directly or pass a
// map_environment(). Nothing else in the client reads configuration.
//
// Thread safety: a value type. Ownership: plain values, and a shared clock; Token masks itself
// when printed.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/internal/clock.hpp"
#include "kernelhub/base/internal/repo_type.hpp"
#include "kernelhub/base/result.hpp"

namespace kernelhub::client {

// A Hub token. to_string() masks it (`hf_…abcd`); value() is for the Authorization header only.
class Token {
 public:
  explicit Token(std::string value) : value_(std::move(value)) {}
  const std::string& value() const { return value_; }
  std::string to_string() const;

 private:
  std::string value_;
};

struct Settings {
  std::filesystem::path hf_home;                       // HF_HOME
  std::filesystem::path hub_cache;                     // HF_HUB_CACHE: the huggingface_hub cache
  std::optional<std::filesystem::path> kernels_cache;  // KERNELS_CACHE, for kernel repos only
  std::string endpoint = "https://huggingface.co";     // HF_ENDPOINT, no trailing `/`
  std::optional<Token> token;                          // HF_TOKEN / HUGGING_FACE_HUB_TOKEN / token file
  bool offline = false;                                // HF_HUB_OFFLINE: no request at all
  bool disable_telemetry = false;                      // HF_HUB_DISABLE_TELEMETRY / DISABLE_TELEMETRY / DO_NOT_TRACK
  std::string user_agent_origin;                       // HF_HUB_USER_AGENT_ORIGIN
  std::chrono::milliseconds connect_timeout{10'000};   // KERNELHUB_CONNECT_TIMEOUT
  std::chrono::milliseconds api_timeout{10'000};       // HF_HUB_ETAG_TIMEOUT: metadata and API reads
  std::chrono::milliseconds read_timeout{10'000};      // HF_HUB_DOWNLOAD_TIMEOUT: no byte for this long
  int max_parallel = 8;                                // KERNELHUB_MAX_PARALLEL: files in flight at once
  int max_retries = 5;                                 // after the first attempt (huggingface_hub http_backoff)
  std::chrono::milliseconds backoff_base{1'000};       // 1, 2, 4, 8, 8 s
  std::chrono::milliseconds backoff_max{8'000};
  std::chrono::milliseconds retry_after_max{60'000};  // a longer Retry-After is capped
  int hash_threads = -1;                              // KERNELHUB_HASH_THREADS; -1: by core count
  int transfer_threads = -1;                          // KERNELHUB_TRANSFER_THREADS: threads, each with its own
                                                      // transfers hashed inline; -1: by core count
  bool fsync = true;                                  // KERNELHUB_FSYNC: fdatasync blobs before they become visible
  // What retries wait on and timings read (base/clock.hpp); tests pass a ManualClock.
  std::shared_ptr<Clock> clock = real_clock();

  // Reads the environment (and the token file, from disk). Errors: kInvalidArgument naming the
  // variable when a number does not parse. Touches disk (token file), not the network.
  static Result<Settings> from_env(const EnvironmentSource& env);

  // Where `type` repos are cached: KERNELS_CACHE for kernels when set, else the hub cache.
  const std::filesystem::path& cache_dir(RepoType type) const;

  // "kernelhub/<version>; os/linux; arch/x86_64" (+ origin); details dropped with telemetry off.
  std::string user_agent() const;
};

}  // namespace kernelhub::client
