// Private to the upload files: one upload's HTTP requests with huggingface_hub's retry policy,
// Hub errors turned into messages that say what a publisher can do, and small helpers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hub_errors.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/client/internal/settings.hpp"
#include "kernelhub/client/internal/transport.hpp"
#include "kernelhub/client/repo_id.hpp"

namespace kernelhub::client {

struct ApiAnswer {
  Response response;
  int status = 0;
  std::string body;
};

struct UploadCall {
  const Settings& settings;
  Transport& transport;

  // A Hub API request (token attached). `doing` completes "… failed while <doing>". With `retry`,
  // network errors and 408/429/5xx are retried with backoff. A 409 is an answer with
  // `accept_409`, else an error; every other status >= 400 is an error.
  Result<ApiAnswer> api(const std::string& method, const std::string& url, std::string body,
                        const std::string& content_type, const std::string& doing, bool retry, bool accept_409 = false,
                        std::vector<Header> extra_headers = {}) const;

  // A storage request (signed URL, never the token), retried like an LFS PUT.
  Result<ApiAnswer> storage(const std::string& method, const std::string& url, std::string body,
                            std::optional<FileSlice> file, const std::vector<Header>& headers,
                            const std::string& doing) const;

 private:
  Result<ApiAnswer> send(Request request, bool retry, const std::string& doing, bool accept_409) const;
};

// {endpoint}/api/{type}s/{org}/{name}
std::string api_base(const Settings& settings, const RepoId& repo, RepoType type);
// {endpoint}/{prefix}{org}/{name}: the web URL, and the base of `.git/info/lfs`.
std::string web_base(const Settings& settings, const RepoId& repo, RepoType type);

}  // namespace kernelhub::client
