#include "kernelhub/fetch/internal/signers.hpp"

#include <toml++/toml.h>

#include <algorithm>

#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/signing/internal/keys.hpp"

namespace kernelhub {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kExample =
    "; write `[[signer]]` with `scope = \"org\"` and either `issuer`, `source-repository` and `workflows`, or "
    "`public-key`";

bool is_name_part(std::string_view part) {
  return !part.empty() && part.size() <= 96 && part != "." && part != ".." &&
         std::all_of(part.begin(), part.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
         });
}

// The strings of `key` in `table`: one string or an array of them. nullopt when absent.
Result<std::optional<std::vector<std::string>>> strings_of(const toml::table& table, std::string_view key,
                                                           const std::string& where) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::optional<std::vector<std::string>>();
  std::vector<std::string> out;
  if (const auto* one = node->as_string()) {
    out.push_back(one->get());
  } else if (const auto* many = node->as_array()) {
    for (const auto& item : *many) {
      const auto* text = item.as_string();
      if (text == nullptr) {
        return unexpected(ErrorCode::kInvalidArgument,
                          where + ": `" + std::string(key) + "` must hold strings" + std::string(kExample));
      }
      out.push_back(text->get());
    }
  } else {
    return unexpected(
        ErrorCode::kInvalidArgument,
        where + ": `" + std::string(key) + "` must be a string or a list of strings" + std::string(kExample));
  }
  if (std::any_of(out.begin(), out.end(), [](const std::string& s) { return s.empty(); })) {
    return unexpected(ErrorCode::kInvalidArgument, where + ": `" + std::string(key) + "` holds an empty string");
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

Result<std::optional<std::string>> string_of(const toml::table& table, std::string_view key, const std::string& where) {
  KH_ASSIGN_OR_RETURN(auto values, strings_of(table, key, where));
  if (!values) return std::optional<std::string>();
  if (values->size() != 1) {
    return unexpected(ErrorCode::kInvalidArgument, where + ": `" + std::string(key) + "` takes one string");
  }
  return std::optional<std::string>(values->front());
}

// One `[[signer]]` table, for each of its scopes.
Status add_table(Signers& signers, const toml::table& table, const std::string& where, const fs::path& base_dir) {
  static constexpr std::string_view kKnown[] = {"scope", "issuer", "source-repository", "workflows", "public-key"};
  for (const auto& [key, value] : table) {
    if (std::find(std::begin(kKnown), std::end(kKnown), key.str()) == std::end(kKnown)) {
      return unexpected(ErrorCode::kInvalidArgument,
                        where + ": unknown key `" + std::string(key.str()) + "`" + std::string(kExample));
    }
  }
  KH_ASSIGN_OR_RETURN(auto scopes, strings_of(table, "scope", where));
  if (!scopes || scopes->empty()) {
    return unexpected(ErrorCode::kInvalidArgument, where + ": a signer needs a `scope`" + std::string(kExample));
  }
  for (const auto& scope : *scopes) {
    if (!is_signer_scope(scope)) {
      return unexpected(ErrorCode::kInvalidArgument,
                        where + ": scope `" + scope.substr(0, 120) + "` is neither an org nor ORG/NAME");
    }
  }
  KH_ASSIGN_OR_RETURN(auto issuer, string_of(table, "issuer", where));
  KH_ASSIGN_OR_RETURN(auto source, string_of(table, "source-repository", where));
  KH_ASSIGN_OR_RETURN(auto workflows, strings_of(table, "workflows", where));
  KH_ASSIGN_OR_RETURN(auto key_path, string_of(table, "public-key", where));
  const bool identity = issuer || source || workflows;
  if (identity == key_path.has_value()) {
    return unexpected(ErrorCode::kInvalidArgument,
                      where +
                          (identity ? ": a signer is an identity or a key, not both"
                                    : ": a signer needs an identity (`issuer`) or a `public-key`") +
                          std::string(kExample));
  }
  std::variant<WorkflowIdentity, SigningKey> who;
  if (identity) {
    if (!issuer) {
      return unexpected(ErrorCode::kInvalidArgument, where +
                                                         ": an identity needs its OIDC `issuer` (GitHub Actions: "
                                                         "\"https://token.actions.githubusercontent.com\")");
    }
    if (!source && !workflows) {
      return unexpected(ErrorCode::kInvalidArgument,
                        where +
                            ": an identity needs a `source-repository` or `workflows`: an issuer alone accepts "
                            "anyone it issues certificates to");
    }
    who = WorkflowIdentity{*issuer, source, workflows.value_or(std::vector<std::string>())};
  } else {
    fs::path path(*key_path);
    if (path.is_relative()) path = base_dir / path;
    auto pem = read_file(path);
    if (!pem) return unexpected(pem.error().with_context(where + ": public-key"));
    if (pem->find("-----BEGIN PUBLIC KEY-----") == std::string::npos) {
      // `kernelhub keygen`'s .pub: the base64 of a raw Ed25519 key.
      auto raw = signing::PublicKey::parse(*pem);
      if (!raw) {
        return unexpected(ErrorCode::kInvalidArgument,
                          where + ": `" + path.string() +
                              "` is neither a PEM public key (-----BEGIN PUBLIC KEY-----) nor `kernelhub keygen`'s "
                              ".pub");
      }
      pem = raw->to_pem();
    }
    who = SigningKey{std::move(*pem)};
  }
  for (const auto& scope : *scopes) signers.add(Signer{scope, who, where});
  return {};
}

}  // namespace

bool is_signer_scope(std::string_view scope) {
  const std::size_t slash = scope.find('/');
  if (slash == std::string_view::npos) return is_name_part(scope);
  return is_name_part(scope.substr(0, slash)) && is_name_part(scope.substr(slash + 1));
}

Status Signers::add_from_toml(std::string_view text, std::string_view origin, const fs::path& base_dir) {
  const std::string file(origin);
  toml::table document;
  try {
    document = toml::parse(text, file);
  } catch (const toml::parse_error& error) {
    return unexpected(ErrorCode::kInvalidArgument, file + ":" + std::to_string(error.source().begin.line) +
                                                       ": not valid TOML: " + std::string(error.description()));
  }
  for (const auto& [key, value] : document) {
    if (key.str() != "signer") {
      return unexpected(ErrorCode::kInvalidArgument, file + ":" + std::to_string(key.source().begin.line) +
                                                         ": unknown table `" + std::string(key.str()) + "`" +
                                                         std::string(kExample));
    }
  }
  const toml::node* node = document.get("signer");
  if (node == nullptr) return {};
  const toml::array* tables = node->as_array();
  if (tables == nullptr) {
    return unexpected(ErrorCode::kInvalidArgument,
                      file + ": `signer` must be an array of tables (`[[signer]]`)" + std::string(kExample));
  }
  for (const auto& item : *tables) {
    const std::string where = file + ":" + std::to_string(item.source().begin.line);
    const toml::table* table = item.as_table();
    if (table == nullptr) return unexpected(ErrorCode::kInvalidArgument, where + ": expected a `[[signer]]` table");
    KH_RETURN_IF_ERROR(add_table(*this, *table, where, base_dir));
  }
  return {};
}

std::vector<Signer> Signers::for_repo(std::string_view repo) const {
  const std::string_view org = repo.substr(0, repo.find('/'));
  std::vector<Signer> out;
  for (const auto& signer : signers_) {
    if (signer.scope == repo || signer.scope == org) out.push_back(signer);
  }
  return out;
}

std::optional<fs::path> Signers::file_path(const EnvironmentSource& env) {
  if (auto named = env(env_vars::kKernelhubSigners)) return fs::path(*named);
  if (auto xdg = env(env_vars::kXdgConfigHome); xdg && fs::path(*xdg).is_absolute()) {
    return fs::path(*xdg) / "kernelhub" / "signers.toml";
  }
  if (auto home = env(env_vars::kHome)) return fs::path(*home) / ".config" / "kernelhub" / "signers.toml";
  return std::nullopt;
}

Result<Signers> Signers::from_environment(const EnvironmentSource& env, const signing::TrustedKeys& keys) {
  Signers signers;
  if (auto path = file_path(env)) {
    std::error_code ec;
    const bool named = env(env_vars::kKernelhubSigners).has_value();
    if (named || fs::exists(*path, ec)) {
      auto text = read_file(*path);
      if (!text) {
        return unexpected(text.error().code,
                          "cannot read the signers file `" + path->string() + "`" +
                              (named ? " (" + std::string(env_vars::kKernelhubSigners) + ")" : std::string()) + ": " +
                              text.error().message);
      }
      KH_RETURN_IF_ERROR(signers.add_from_toml(*text, path->string(), path->parent_path()));
    }
  }
  for (const auto& entry : keys.entries()) {
    signers.add(Signer{entry.scope, SigningKey{entry.key.to_pem()}, entry.origin});
  }
  return signers;
}

}  // namespace kernelhub
