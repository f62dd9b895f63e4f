#include "kernelhub/metadata.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kernelhub/base/base64.hpp"
#include "kernelhub/base/json_nesting.hpp"
#include "kernelhub/base/sha256.hpp"

namespace kernelhub {

namespace {

Unexpected bad_metadata(std::string_view why) {
  return unexpected(ErrorCode::kCorruptFile, "metadata.json is not valid: " + std::string(why));
}

// Op namespaces and module names: [A-Za-z_][A-Za-z0-9_]*.
bool is_identifier(std::string_view s) {
  if (s.empty() || s.size() > 200 || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

bool excluded_from_digest(const std::filesystem::path& rel) {
  const std::string name = rel.filename().string();
  if (rel == "metadata.json" || rel == "metadata.json.sigstore" || rel == "kernelhub.sig") return true;
  if (rel.extension() == ".pyc") return true;
  for (const auto& part : rel) {
    if (part == "__pycache__") return true;
  }
  return name.empty();
}

}  // namespace

Result<Metadata> Metadata::parse(std::string_view text) {
  // kernel-builder writes four levels at most; refuse hostile nesting before parsing it.
  if (!json_nesting_within(text, 32)) return bad_metadata("it is nested more than 32 levels deep");
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad_metadata("it is not JSON");
  if (!j.is_object()) return bad_metadata("it is not a JSON object");
  Metadata m;
  m.raw = std::string(text);
  if (!j.contains("name") || !j["name"].is_string()) return bad_metadata("`name` is missing");
  m.name = j["name"].get<std::string>();
  if (!j.contains("id") || !j["id"].is_string()) return bad_metadata("`id` (the op namespace) is missing");
  m.id = j["id"].get<std::string>();
  if (!is_identifier(m.id)) return bad_metadata("`id` `" + m.id.substr(0, 64) + "` is not a valid namespace");
  if (j.contains("version") && j["version"].is_number_integer()) m.version = j["version"].get<int>();
  if (j.contains("backend") && j["backend"].is_object()) {
    const auto& b = j["backend"];
    if (b.contains("type") && b["type"].is_string()) m.backend = b["type"].get<std::string>();
    if (b.contains("archs") && b["archs"].is_array()) {
      for (const auto& a : b["archs"]) {
        if (a.is_string()) m.archs.push_back(a.get<std::string>());
      }
    }
  }
  if (j.contains("digest") && !j["digest"].is_null()) {
    const auto& d = j["digest"];
    if (!d.is_object() || !d.contains("files") || !d["files"].is_object()) return bad_metadata("`digest` is malformed");
    if (d.contains("algorithm") && !d["algorithm"].is_string()) {
      return bad_metadata("digest `algorithm` is not a string");
    }
    if (d.value("algorithm", std::string("sha256")) != "sha256") {
      return bad_metadata("digest algorithm `" + d.value("algorithm", std::string()) + "` is not supported (sha256 is)");
    }
    for (const auto& [path, value] : d["files"].items()) {
      if (!value.is_string()) return bad_metadata("digest of `" + path + "` is not a string");
      m.digest[path] = value.get<std::string>();
    }
  }
  return m;
}

Result<Metadata> Metadata::read(const std::filesystem::path& variant_dir) {
  const auto path = variant_dir / "metadata.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return unexpected(ErrorCode::kNotFound, "`" + path.string() + "` does not exist; every kernel-builder variant has one");
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  auto m = parse(buffer.str());
  if (!m) return unexpected(m.error().with_context("`" + path.string() + "`"));
  return m;
}

Result<std::map<std::string, std::string>> compute_digest(const std::filesystem::path& variant_dir,
                                                          FileDigests* digests) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(variant_dir, ec), end;
  if (ec) return unexpected(os_error("cannot list `" + variant_dir.string() + "`", ec.value()));
  for (; it != end; it.increment(ec)) {
    if (ec) return unexpected(os_error("cannot list `" + variant_dir.string() + "`", ec.value()));
    if (!it->is_regular_file()) continue;
    const auto rel = it->path().lexically_relative(variant_dir);
    if (excluded_from_digest(rel)) continue;
    KH_ASSIGN_OR_RETURN(Sha256Digest digest, sha256_file(it->path(), digests));
    out[rel.generic_string()] = base64_encode(digest);
  }
  return out;
}

Status verify_digest(const std::filesystem::path& variant_dir, const Metadata& metadata, FileDigests* digests) {
  KH_ASSIGN_OR_RETURN(auto actual, compute_digest(variant_dir, digests));
  std::vector<std::string> problems;
  for (const auto& [path, expected] : metadata.digest) {
    auto it = actual.find(path);
    if (it == actual.end()) {
      problems.push_back("`" + path + "` is missing");
    } else if (it->second != expected) {
      problems.push_back("`" + path + "` has sha256 " + it->second + ", metadata.json says " + expected);
    }
  }
  for (const auto& [path, digest] : actual) {
    if (!metadata.digest.contains(path)) problems.push_back("`" + path + "` is not listed in the digest");
  }
  if (problems.empty()) return {};
  std::string msg = "the files of `" + variant_dir.string() + "` do not match metadata.json `digest`:";
  for (const auto& p : problems) msg += "\n  - " + p;
  msg += "\nThe variant was modified after it was built; download it again or rebuild it.";
  return unexpected(ErrorCode::kIntegrityMismatch, msg);
}

}  // namespace kernelhub
