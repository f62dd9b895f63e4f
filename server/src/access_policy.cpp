#include "kernelhub/server/internal/access_policy.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "kernelhub/base/internal/read_file.hpp"

namespace kernelhub::server {

Result<AccessPolicy> AccessPolicy::load(const std::filesystem::path& tokens_file) {
  auto text = read_file(tokens_file);
  if (!text) return unexpected(text.error().with_context("reading the tokens file"));
  auto policy = parse(*text);
  if (!policy) return unexpected(policy.error().with_context("tokens file `" + tokens_file.string() + "`"));
  return policy;
}

Result<AccessPolicy> AccessPolicy::parse(std::string_view json_text) {
  const auto json = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  auto corrupt = [](std::string what) { return unexpected(ErrorCode::kCorruptFile, std::move(what)); };
  if (json.is_discarded() || !json.is_object()) {
    return corrupt("is not a JSON object; expected {\"tokens\": {\"<token>\": {\"user\": ...}}}");
  }
  AccessPolicy policy;
  if (json.contains("tokens")) {
    const auto& tokens = json["tokens"];
    if (!tokens.is_object()) return corrupt("`tokens` must be an object of token → {user, orgs, write}");
    for (const auto& [token, value] : tokens.items()) {
      if (token.empty()) return corrupt("an empty token is not allowed");
      if (!value.is_object() || !value.contains("user") || !value["user"].is_string()) {
        return corrupt("token entry `" + token.substr(0, 6) + "...` needs a string `user`");
      }
      TokenInfo info;
      info.user = value["user"].get<std::string>();
      info.fullname = value.contains("fullname") && value["fullname"].is_string() ? value["fullname"].get<std::string>()
                                                                                  : info.user;
      if (value.contains("orgs")) {
        if (!value["orgs"].is_array()) return corrupt("`orgs` of user `" + info.user + "` must be a list");
        for (const auto& org : value["orgs"]) {
          if (!org.is_string()) return corrupt("`orgs` of user `" + info.user + "` must hold strings");
          info.orgs.push_back(org.get<std::string>());
          policy.organizations_.try_emplace(info.orgs.back(),
                                            OrganizationInfo{info.orgs.back(), info.orgs.back(), false, false});
        }
      }
      if (value.contains("expires")) {
        if (!value["expires"].is_number_integer()) {
          return corrupt("`expires` of user `" + info.user + "` must be Unix seconds (an integer)");
        }
        info.expires_at = value["expires"].get<std::int64_t>();
      }
      if (value.contains("write")) {
        if (!value["write"].is_boolean()) return corrupt("`write` of user `" + info.user + "` must be true/false");
        info.write = value["write"].get<bool>();
      }
      policy.tokens_.emplace(token, std::move(info));
    }
  }
  if (json.contains("organizations")) {
    const auto& orgs = json["organizations"];
    if (!orgs.is_object())
      return corrupt("`organizations` must be an object of name → {fullname, trustedKernelPublisher}");
    for (const auto& [name, value] : orgs.items()) {
      if (!value.is_object()) return corrupt("organization `" + name + "` must be an object");
      OrganizationInfo info{name, value.value("fullname", name), false, false};
      for (auto [key, flag] : {std::pair{"trustedKernelPublisher", &info.trusted_kernel_publisher},
                               std::pair{"privateReposByDefault", &info.private_repos_by_default}}) {
        if (!value.contains(key)) continue;
        if (!value[key].is_boolean()) return corrupt(std::string("`") + key + "` of `" + name + "` must be true/false");
        *flag = value[key].get<bool>();
      }
      policy.organizations_[name] = std::move(info);
    }
  }
  return policy;
}

const TokenInfo* AccessPolicy::find(std::string_view token) const {
  auto it = tokens_.find(token);
  return it == tokens_.end() ? nullptr : &it->second;
}

bool AccessPolicy::knows_user(std::string_view name) const {
  for (const auto& [token, info] : tokens_) {
    if (info.user == name) return true;
  }
  return false;
}

void AccessPolicy::trust_publisher(std::string_view org) {
  auto [it, inserted] =
      organizations_.try_emplace(std::string(org), OrganizationInfo{std::string(org), std::string(org), true, false});
  it->second.trusted_kernel_publisher = true;
}

bool AccessPolicy::owns(const TokenInfo* who, std::string_view ns) {
  if (who == nullptr) return false;
  if (who->user == ns) return true;
  return std::find(who->orgs.begin(), who->orgs.end(), ns) != who->orgs.end();
}

std::optional<OrganizationInfo> AccessPolicy::organization(std::string_view name) const {
  auto it = organizations_.find(name);
  if (it == organizations_.end()) return std::nullopt;
  return it->second;
}

}  // namespace kernelhub::server
