#include "kernelhub/signing/internal/trusted_keys.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "kernelhub/base/internal/base64.hpp"

namespace kernelhub::signing {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxConfigSize = 1024 * 1024;

std::string_view trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

bool is_name_part(std::string_view part) {
  return !part.empty() && part.size() <= 96 && part != "." && part != ".." &&
         std::all_of(part.begin(), part.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
         });
}

bool is_scope(std::string_view scope) {
  const std::size_t slash = scope.find('/');
  if (slash == std::string_view::npos) return is_name_part(scope);
  return is_name_part(scope.substr(0, slash)) && is_name_part(scope.substr(slash + 1));
}

// A base64 raw key, or else a key file path.
Result<PublicKey> key_from_text(std::string_view text, const fs::path& base_dir) {
  if (auto raw = base64_decode(text); raw && raw->size() == 32) return PublicKey::parse(text);
  fs::path path(text);
  if (path.is_relative()) path = base_dir / path;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "`" + std::string(text.substr(0, 80)) +
                          "` is neither the base64 of a 32-byte Ed25519 public key nor an existing key file");
  }
  return PublicKey::read(path);
}

}  // namespace

Status TrustedKeys::add(std::string_view scope, const PublicKey& key, std::string origin) {
  if (!is_scope(scope)) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "trusted key scope `" + std::string(scope) + "` is neither an org nor ORG/NAME");
  }
  entries_.push_back(Entry{std::string(scope), key, std::move(origin)});
  return {};
}

std::vector<TrustedKeys::Entry> TrustedKeys::for_repo(std::string_view repo) const {
  const std::string_view org = repo.substr(0, repo.find('/'));
  std::vector<Entry> out;
  for (const auto& entry : entries_) {
    if (entry.scope == repo || entry.scope == org) out.push_back(entry);
  }
  return out;
}

Status TrustedKeys::add_from_variable(std::string_view value) {
  const std::string origin(env_vars::kKernelhubTrustedKeys);
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    const std::string_view item = trim(value.substr(0, comma));
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    auto bad = [&](const std::string& why) {
      return unexpected(ErrorCode::kInvalidArgument, origin + " entry `" + std::string(item.substr(0, 120)) +
                                                         "`: " + why + " (expected `org=KEY` or `org/name=KEY`)");
    };
    if (eq == std::string_view::npos) return bad("no `=`");
    auto key = key_from_text(trim(item.substr(eq + 1)), fs::current_path());
    if (!key) return bad(key.error().message);
    if (auto added = add(trim(item.substr(0, eq)), *key, origin); !added) return bad(added.error().message);
  }
  return {};
}

Status TrustedKeys::add_from_config(std::string_view text, std::string_view origin, const fs::path& base_dir) {
  int number = 0;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    ++number;
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    const std::string where = std::string(origin) + ":" + std::to_string(number);
    const std::size_t space = line.find_first_of(" \t");
    if (space == std::string_view::npos) {
      return unexpected(ErrorCode::kInvalidArgument,
                        where + ": expected `SCOPE KEY`, found `" + std::string(line.substr(0, 120)) + "`");
    }
    auto key = key_from_text(trim(line.substr(space)), base_dir);
    if (!key) return unexpected(key.error().with_context(where));
    if (auto added = add(line.substr(0, space), *key, where); !added)
      return unexpected(added.error().with_context(where));
  }
  return {};
}

std::optional<fs::path> TrustedKeys::config_path(const EnvironmentSource& env) {
  if (auto xdg = env(env_vars::kXdgConfigHome); xdg && fs::path(*xdg).is_absolute()) {
    return fs::path(*xdg) / "kernelhub" / "trusted_keys";
  }
  if (auto home = env(env_vars::kHome)) return fs::path(*home) / ".config" / "kernelhub" / "trusted_keys";
  return std::nullopt;
}

Result<TrustedKeys> TrustedKeys::from_environment(const EnvironmentSource& env) {
  TrustedKeys keys;
  if (auto path = config_path(env)) {
    std::error_code ec;
    if (fs::exists(*path, ec)) {
      const auto size = fs::file_size(*path, ec);
      if (ec || size > kMaxConfigSize) {
        return unexpected(ErrorCode::kIo, "cannot read trusted keys file `" + path->string() + "`" +
                                              (ec ? ": " + ec.message() : std::string(": larger than 1 MiB")));
      }
      std::ifstream in(*path, std::ios::binary);
      if (!in) return unexpected(os_error("cannot open trusted keys file `" + path->string() + "`", errno));
      std::ostringstream text;
      text << in.rdbuf();
      KH_RETURN_IF_ERROR(keys.add_from_config(text.str(), path->string(), path->parent_path()));
    }
  }
  if (auto value = env(env_vars::kKernelhubTrustedKeys)) KH_RETURN_IF_ERROR(keys.add_from_variable(*value));
  return keys;
}

}  // namespace kernelhub::signing
