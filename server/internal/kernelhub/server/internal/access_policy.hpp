// AccessPolicy: who may read and write which repo, from the tokens file given to
// `kernelhub serve --tokens FILE`:
//
//   {"tokens": {"<token>": {"user": "alice", "fullname": "Alice A.", "orgs": ["acme"], "write": true,
//                           "expires": 1767225600}},
//    "organizations": {"acme": {"fullname": "Acme", "trustedKernelPublisher": true,
//                               "privateReposByDefault": false}}}
//
// A token reads, and with `write` also writes, the repos whose namespace is its user or one of
// its orgs. Anonymous callers read public repos only. Private repos answer "not found" to
// everyone else, like the Hub, so their existence does not leak.
//
// Thread safety: immutable after load(); share freely between request threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"

namespace kernelhub::server {

struct TokenInfo {
  std::string user;
  std::string fullname;  // whoami's `fullname`; the user name when not given
  std::vector<std::string> orgs;
  bool write = false;
  std::optional<std::int64_t> expires_at;  // Unix seconds; after it the token is refused (401)
};

struct OrganizationInfo {
  std::string name;
  std::string fullname;
  bool trusted_kernel_publisher = false;
  // Repos created under the org without `private` are private (the Hub's Enterprise setting).
  bool private_repos_by_default = false;
};

class AccessPolicy {
 public:
  AccessPolicy() = default;

  // Reads the tokens file. Errors: kNotFound (no such file), kCorruptFile (not the JSON shape
  // above, with the offending key named), kIo.
  static Result<AccessPolicy> load(const std::filesystem::path& tokens_file);
  // Same, from the file's text (tests).
  static Result<AccessPolicy> parse(std::string_view json_text);

  // The identity behind a bearer token, or nullopt if the token is unknown.
  const TokenInfo* find(std::string_view token) const;

  // Whether some token belongs to user `name` (the users this server knows).
  bool knows_user(std::string_view name) const;

  // Marks an organization as a trusted kernel publisher (from --trusted-publisher).
  void trust_publisher(std::string_view org);

  // Whether `who` (nullptr = anonymous) owns namespace `ns` (its user or one of its orgs).
  static bool owns(const TokenInfo* who, std::string_view ns);

  // An organization known from the tokens file, an org of some token, or a trusted publisher.
  std::optional<OrganizationInfo> organization(std::string_view name) const;

 private:
  std::map<std::string, TokenInfo, std::less<>> tokens_;
  std::map<std::string, OrganizationInfo, std::less<>> organizations_;
};

}  // namespace kernelhub::server
