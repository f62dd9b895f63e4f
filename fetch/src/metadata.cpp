#include "kernelhub/fetch/metadata.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "git_url.hpp"
#include "kernelhub/base/internal/base64.hpp"
#include "kernelhub/base/internal/json_nesting.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "kernelhub/base/internal/sha512.hpp"
#include "kernelhub/fetch/internal/variant_checks.hpp"
#include "kernelhub/signing/internal/signature_file.hpp"

namespace kernelhub {

namespace {

using nlohmann::json;

Unexpected bad_metadata(std::string_view why) {
  return unexpected(ErrorCode::kCorruptFile,
                    "metadata.json is not valid: " + std::string(why) +
                        ". kernel-builder does not write this and the `kernels` package refuses it too: rebuild the "
                        "variant with kernel-builder (or the project's CMake build) and publish it again");
}

// At most `limit` bytes of `text` for a message, cut at a UTF-8 character boundary (a cut character
// would make the message invalid UTF-8, which Python refuses to decode), "..." when cut.
std::string clip(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return std::string(text);
  while (limit > 0 && (static_cast<unsigned char>(text[limit]) & 0xC0) == 0x80) --limit;
  return std::string(text.substr(0, limit)) + "...";
}

// What a JSON value is, for a message: `a string ("x")`, `the number 1.5`, `null`, ...
std::string describe(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return value.get<bool>() ? "true" : "false";
    case json::value_t::string: return "a string (" + clip(value.dump(), 64) + ")";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::number_unsigned:
    case json::value_t::number_integer:
    case json::value_t::number_float: return "the number " + clip(value.dump(), 64);
    default: return "not a JSON value";
  }
}

Unexpected wrong(std::string_view field, const json& found, std::string_view expected) {
  return bad_metadata("`" + std::string(field) + "` is " + describe(found) + ", expected " + std::string(expected));
}

Unexpected missing(std::string_view field, std::string_view expected) {
  return bad_metadata("`" + std::string(field) + "` is missing (" + std::string(expected) + ")");
}

// One JSON object of the document, with the dotted path that names its fields in messages.
struct Object {
  const json& value;
  std::string path;  // "" for the document, "backend.", "provenance.kernel.", ...

  std::string field(std::string_view key) const { return path + std::string(key); }
  const json* find(std::string_view key) const {
    auto it = value.find(key);
    return it == value.end() ? nullptr : &*it;
  }
  // A field that may be absent or null (serde's Option): nullptr for both.
  const json* optional(std::string_view key) const {
    const json* v = find(key);
    return v == nullptr || v->is_null() ? nullptr : v;
  }
};

Result<std::string> required_string(const Object& object, std::string_view key, std::string_view expected) {
  const json* v = object.find(key);
  if (v == nullptr) return missing(object.field(key), expected);
  if (!v->is_string()) return wrong(object.field(key), *v, expected);
  return v->get<std::string>();
}

Result<std::vector<std::string>> string_list(const json& list, std::string_view field) {
  if (!list.is_array()) return wrong(field, list, "a list of strings");
  std::vector<std::string> out;
  for (const auto& item : list) {
    if (!item.is_string()) return wrong(std::string(field) + "[]", item, "a string");
    out.push_back(item.get<std::string>());
  }
  return out;
}

// kernels-data config/name.rs KernelName: ^[a-z][-a-z0-9]*[a-z0-9]$.
bool is_kernel_name(std::string_view s) {
  auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (s.size() < 2 || !(s.front() >= 'a' && s.front() <= 'z') || !lower_or_digit(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return lower_or_digit(c) || c == '-'; });
}

// kernels 0.19.1's Backend (plus `agnostic`, which is no backend).
constexpr std::string_view kKnownBackends = "cann, cpu, cuda, metal, neuron, rocm, tpu, xpu and agnostic";
constexpr std::string_view kAgnosticBackend = "agnostic";

bool is_backend(std::string_view type) {
  static const std::set<std::string, std::less<>> kBackends{"cann",   "cpu",  "cuda", "metal",
                                                            "neuron", "rocm", "tpu",  "xpu"};
  return kBackends.contains(type);
}

// Op namespaces and module names: [A-Za-z_][A-Za-z0-9_]*.
bool is_identifier(std::string_view s) {
  if (s.empty() || s.size() > 200 || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
}

// kernels-data git.rs Oid: a full SHA-1 or SHA-256 object id, any case; kept in lower case.
std::optional<std::string> parse_oid(std::string_view s) {
  if (s.size() != 40 && s.size() != 64) return std::nullopt;
  std::string out;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

// `kernels-minver`: kernels-data's Version (trimmed, dot-separated usize parts), exactly three parts.
bool is_three_part_version(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  const auto first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return false;
  s = s.substr(first, s.find_last_not_of(kSpace) - first + 1);
  int parts = 0;
  for (std::size_t start = 0;; ++parts) {
    const auto dot = s.find('.', start);
    if (!is_usize(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start))) return false;
    if (dot == std::string_view::npos) return parts + 1 == 3;
    start = dot + 1;
  }
}

Result<std::optional<std::string>> git_url(const Object& object, std::string_view key) {
  const json* v = object.optional(key);
  if (v == nullptr) return std::optional<std::string>();
  if (!v->is_string()) return wrong(object.field(key), *v, "a git URL");
  const std::string url = v->get<std::string>();
  if (auto problem = git_url_problem(url)) {
    return bad_metadata("`" + object.field(key) + "` `" + clip(url, 200) + "` is not a git URL: " + *problem);
  }
  return std::optional<std::string>(url);
}

Result<std::vector<KernelDependency>> read_kernel_depends(const Object& document) {
  std::vector<KernelDependency> out;
  const json* list = document.find("kernel-depends");
  if (list == nullptr) return out;  // builders before kernels 0.17 do not write it
  if (!list->is_array()) return wrong("kernel-depends", *list, "a list of {repo-id, version | revision}");
  for (const auto& item : *list) {
    if (!item.is_object()) return wrong("kernel-depends[]", item, "an object {repo-id, version | revision}");
    const Object entry{item, "kernel-depends[]."};
    for (const auto& [key, value] : item.items()) {
      if (key != "repo-id" && key != "version" && key != "revision") {
        return bad_metadata("`kernel-depends[]` has the unknown field `" + clip(key, 64) +
                            "` (it takes repo-id, version and revision only)");
      }
    }
    KernelDependency dependency;
    KH_ASSIGN_OR_RETURN(dependency.repo_id, required_string(entry, "repo-id", "a repo id, e.g. `org/name`"));
    if (const json* v = entry.optional("version")) {
      // kernels-data takes any usize; a branch v<N> past 2^31 - 1 is refused here (KernelDependency).
      if (!v->is_number_unsigned() || v->get<std::uint64_t>() > std::numeric_limits<int>::max()) {
        return wrong("kernel-depends[].version", *v, "a non-negative integer (a major version)");
      }
      dependency.version = static_cast<int>(v->get<std::uint64_t>());
    }
    if (const json* v = entry.optional("revision")) {
      if (!v->is_string()) return wrong("kernel-depends[].revision", *v, "a string");
      dependency.revision = v->get<std::string>();
    }
    if (dependency.version.has_value() == dependency.revision.has_value()) {
      return bad_metadata("`kernel-depends[]` entry `" + clip(dependency.repo_id, 96) +
                          "` needs exactly one of `version` and `revision`");
    }
    out.push_back(std::move(dependency));
  }
  return out;
}

// A GitStatus object's commit (or its older name `sha`) and dirty flag. `required`: both must be
// there; otherwise both or neither (kernel-builder's own version may not know its commit).
Result<std::optional<GitStatus>> git_status(const Object& object, bool required) {
  const char* commit_key = object.find("commit") != nullptr ? "commit" : "sha";
  const json* commit = object.find(commit_key);
  const json* dirty = object.find("dirty");
  if (!required && commit == nullptr && dirty == nullptr) return std::optional<GitStatus>();
  if (commit == nullptr) return missing(object.field("commit"), "the 40 or 64 hex digit commit id");
  if (dirty == nullptr) return missing(object.field("dirty"), "true or false, whether the tree had changes");
  if (!commit->is_string()) return wrong(object.field(commit_key), *commit, "a 40 or 64 hex digit commit id");
  auto oid = parse_oid(commit->get<std::string>());
  if (!oid) return wrong(object.field(commit_key), *commit, "a 40 or 64 hex digit commit id");
  if (!dirty->is_boolean()) return wrong(object.field("dirty"), *dirty, "true or false");
  return std::optional<GitStatus>(GitStatus{*oid, dirty->get<bool>()});
}

Result<std::optional<Provenance>> read_provenance(const Object& document) {
  const json* v = document.optional("provenance");
  if (v == nullptr) return std::optional<Provenance>();
  if (!v->is_object()) return wrong("provenance", *v, "an object {kernel-builder, kernel}");
  const Object object{*v, "provenance."};
  const json* builder = object.find("kernel-builder");
  if (builder == nullptr) return missing("provenance.kernel-builder", "an object {version, commit, dirty}");
  if (!builder->is_object()) return wrong("provenance.kernel-builder", *builder, "an object {version, commit, dirty}");
  const Object builder_object{*builder, "provenance.kernel-builder."};
  Provenance out;
  KH_ASSIGN_OR_RETURN(out.builder_version, required_string(builder_object, "version", "a string"));
  KH_ASSIGN_OR_RETURN(out.builder, git_status(builder_object, /*required=*/false));
  if (const json* kernel = object.optional("kernel")) {
    if (!kernel->is_object()) return wrong("provenance.kernel", *kernel, "an object {commit, dirty}");
    KH_ASSIGN_OR_RETURN(out.kernel, git_status(Object{*kernel, "provenance.kernel."}, /*required=*/true));
  }
  return std::optional<Provenance>(std::move(out));
}

// Fills m.has_digest, m.digest_algorithm and m.digest.
Status read_digest(const Object& document, Metadata& m) {
  const json* v = document.optional("digest");
  if (v == nullptr) return {};
  if (!v->is_object()) return wrong("digest", *v, "an object {algorithm, files}");
  const Object object{*v, "digest."};
  KH_ASSIGN_OR_RETURN(std::string algorithm, required_string(object, "algorithm", "`sha256` or `sha512`"));
  if (algorithm == "sha256") {
    m.digest_algorithm = DigestAlgorithm::kSha256;
  } else if (algorithm == "sha512") {
    m.digest_algorithm = DigestAlgorithm::kSha512;
  } else {
    return bad_metadata("digest `algorithm` `" + clip(algorithm, 64) + "` is not supported (sha256 and sha512 are)");
  }
  const json* files = object.find("files");
  if (files == nullptr) return missing("digest.files", "an object {relative path: base64 hash}");
  if (!files->is_object()) return wrong("digest.files", *files, "an object {relative path: base64 hash}");
  for (const auto& [path, value] : files->items()) {
    if (!value.is_string()) return wrong("digest.files[\"" + clip(path, 96) + "\"]", value, "a base64 hash");
    m.digest[path] = value.get<std::string>();
  }
  m.has_digest = true;
  return {};
}

// Note [Duplicate fields]: serde (kernels-data) refuses a known field given twice; nlohmann keeps
// the last one silently, so two `id`s would be read differently by us and by kernels. A parse
// callback records the keys of every object (`sha` counting as `commit`, its alias), and the fields
// below are refused when given twice. Unknown fields and `digest.files` paths may repeat, as there.
struct DuplicateFields {
  struct Frame {
    std::string path;  // "", "backend", "kernel-depends[]", "provenance.kernel", ...
    bool is_object = false;
    std::string last_key;
    std::set<std::string> keys;
  };
  std::vector<Frame> open;
  std::vector<std::string> found;  // "provenance.kernel.commit"

  static bool is_known(const std::string& path, const std::string& key) {
    static const std::map<std::string, std::set<std::string>> kFields{
        {"",
         {"name", "id", "version", "license", "upstream", "source", "python-depends", "kernel-depends", "backend",
          "digest", "provenance", "kernels-minver", "build-layout"}},
        {"backend", {"type", "archs"}},
        {"digest", {"algorithm", "files"}},
        {"provenance", {"kernel-builder", "kernel"}},
        {"provenance.kernel-builder", {"version", "commit", "dirty"}},
        {"provenance.kernel", {"commit", "dirty"}},
        {"kernel-depends[]", {"repo-id", "version", "revision"}},
    };
    auto it = kFields.find(path);
    return it != kFields.end() && it->second.contains(key);
  }

  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start: {
        std::string path;
        if (!open.empty()) {
          const Frame& parent = open.back();
          path =
              parent.is_object ? (parent.path.empty() ? "" : parent.path + ".") + parent.last_key : parent.path + "[]";
        }
        open.push_back(Frame{std::move(path), event == json::parse_event_t::object_start, {}, {}});
        break;
      }
      case json::parse_event_t::key: {
        Frame& frame = open.back();
        frame.last_key = parsed.get<std::string>();
        const bool alias = frame.last_key == "sha" && frame.path.starts_with("provenance.");
        const std::string key = alias ? "commit" : frame.last_key;
        if (!frame.keys.insert(key).second && is_known(frame.path, key)) {
          found.push_back((frame.path.empty() ? "" : frame.path + ".") + key);
        }
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end: open.pop_back(); break;
      case json::parse_event_t::value: break;
    }
    return true;
  }
};

bool excluded_from_digest(const std::filesystem::path& rel) {
  const std::string name = rel.filename().string();
  if (rel == "metadata.json" || rel == "metadata.json.sigstore" || rel == signing::kV1SignatureFileName) return true;
  if (rel.extension() == ".pyc") return true;
  for (const auto& part : rel) {
    if (part == "__pycache__") return true;
  }
  return name.empty();
}

Result<std::string> hash_base64(const std::filesystem::path& path, DigestAlgorithm algorithm, FileDigests* digests) {
  if (algorithm == DigestAlgorithm::kSha512) {
    KH_ASSIGN_OR_RETURN(Sha512Digest digest, sha512_file(path));
    return base64_encode(digest);
  }
  KH_ASSIGN_OR_RETURN(Sha256Digest digest, sha256_file(path, digests));
  return base64_encode(digest);
}

}  // namespace

bool Provenance::is_dirty() const {
  return (builder && builder->dirty) || (kernel && kernel->dirty);
}

Result<Metadata> Metadata::parse(std::string_view text) {
  // kernel-builder writes four levels at most; refuse hostile nesting before parsing it.
  if (!json_nesting_within(text, 32)) return bad_metadata("it is nested more than 32 levels deep");
  // nlohmann skips a byte order mark; serde_json, and so kernels, refuses it.
  if (text.starts_with("\xEF\xBB\xBF")) return bad_metadata("it starts with a UTF-8 byte order mark");
  DuplicateFields duplicates;
  const json j = json::parse(
      text, [&](int depth, json::parse_event_t event, json& parsed) { return duplicates(depth, event, parsed); },
      /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad_metadata("it is not JSON");
  if (!j.is_object()) return bad_metadata("it is " + describe(j) + ", not a JSON object");
  if (!duplicates.found.empty()) return bad_metadata("`" + duplicates.found.front() + "` is given twice");
  const Object document{j, ""};
  Metadata m;
  m.raw = std::string(text);

  KH_ASSIGN_OR_RETURN(m.name, required_string(document, "name", "the kernel's name, e.g. `relu`"));
  if (!is_kernel_name(m.name)) {
    return bad_metadata("`name` `" + clip(m.name, 64) +
                        "` is not a kernel name: lower-case letters, digits and dashes, starting with a letter and "
                        "not ending with a dash, at least two characters");
  }
  KH_ASSIGN_OR_RETURN(m.id, required_string(document, "id", "the op namespace, e.g. `_relu_cuda_0123abc`"));
  if (!is_identifier(m.id)) return bad_metadata("`id` `" + clip(m.id, 64) + "` is not a valid namespace");
  const json* version = document.find("version");
  if (version == nullptr) return missing("version", "the kernel's version, a non-negative integer");
  if (!version->is_number_unsigned()) return wrong("version", *version, "a non-negative integer");
  m.version = version->get<std::uint64_t>();
  KH_ASSIGN_OR_RETURN(m.license, required_string(document, "license", "a license identifier, e.g. `Apache-2.0`"));
  KH_ASSIGN_OR_RETURN(m.upstream, git_url(document, "upstream"));
  KH_ASSIGN_OR_RETURN(m.source, git_url(document, "source"));
  const json* python_depends = document.find("python-depends");
  if (python_depends == nullptr) return missing("python-depends", "a list of Python dependencies, often empty");
  KH_ASSIGN_OR_RETURN(m.python_depends, string_list(*python_depends, "python-depends"));
  KH_ASSIGN_OR_RETURN(m.kernel_depends, read_kernel_depends(document));

  const json* backend = document.find("backend");
  if (backend == nullptr) return missing("backend", "an object {type, archs}");
  if (!backend->is_object()) return wrong("backend", *backend, "an object {type, archs}");
  const Object backend_object{*backend, "backend."};
  KH_ASSIGN_OR_RETURN(m.backend, required_string(backend_object, "type", "the backend, e.g. `cuda`"));
  // As kernels 0.19.1: an agnostic build has no archs, and those of a type this version does not
  // know are not read (they may mean something else there).
  if (const json* archs = backend_object.optional("archs"); archs != nullptr && is_backend(m.backend)) {
    KH_ASSIGN_OR_RETURN(m.archs, string_list(*archs, "backend.archs"));
  }

  KH_RETURN_IF_ERROR(read_digest(document, m));
  KH_ASSIGN_OR_RETURN(m.provenance, read_provenance(document));
  if (const json* minver = document.optional("kernels-minver")) {
    if (!minver->is_string() || !is_three_part_version(minver->get<std::string>())) {
      return wrong("kernels-minver", *minver, "a version MAJOR.MINOR.PATCH, e.g. \"0.17.2\"");
    }
    m.kernels_minver = minver->get<std::string>();
  }
  if (const json* layout = document.find("build-layout")) {
    if (*layout == "zip") {
      m.build_layout = BuildLayout::kZip;
    } else if (*layout != "files") {
      return wrong("build-layout", *layout, "\"files\" or \"zip\"");
    }
  }
  return m;
}

std::string_view to_string(BuildLayout layout) {
  return layout == BuildLayout::kZip ? "zip" : "files";
}

bool Metadata::has_known_backend() const {
  return is_backend(backend) || backend == kAgnosticBackend;
}

Status Metadata::require_known_backend() const {
  if (has_known_backend()) return {};
  return unexpected(ErrorCode::kIncompatibleBinary,
                    "kernel `" + name + "` is built for the backend `" + clip(backend, 64) +
                        "`, which this version does not know (it knows " + std::string(kKnownBackends) +
                        "): unknown backend, this kernel may require a newer version of `kernels`; upgrade "
                        "kernelhub");
}

Result<Metadata> Metadata::read(const std::filesystem::path& variant_dir) {
  const auto path = variant_dir / "metadata.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return unexpected(ErrorCode::kNotFound,
                      "`" + path.string() + "` does not exist; every kernel-builder variant has one");
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  auto m = parse(buffer.str());
  if (!m) return unexpected(m.error().with_context("`" + path.string() + "`"));
  return m;
}

Result<std::map<std::string, std::string>> compute_digest(const std::filesystem::path& variant_dir,
                                                          FileDigests* digests) {
  return compute_digest(variant_dir, DigestAlgorithm::kSha256, digests);
}

Result<std::map<std::string, std::string>> compute_digest(const std::filesystem::path& variant_dir,
                                                          DigestAlgorithm algorithm, FileDigests* digests) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(variant_dir, ec), end;
  if (ec) return unexpected(os_error("cannot list `" + variant_dir.string() + "`", ec.value()));
  for (; it != end; it.increment(ec)) {
    if (ec) return unexpected(os_error("cannot list `" + variant_dir.string() + "`", ec.value()));
    const auto rel = it->path().lexically_relative(variant_dir);
    std::error_code link_ec;
    // kernels-data fails on a link to nothing too (it canonicalizes every entry).
    if (it->is_symlink(link_ec) && !std::filesystem::exists(it->path(), link_ec)) {
      return unexpected(ErrorCode::kIntegrityMismatch, "`" + rel.generic_string() + "` in `" + variant_dir.string() +
                                                           "` is a symlink to nothing; download the variant again");
    }
    if (!it->is_regular_file() || excluded_from_digest(rel)) continue;
    KH_ASSIGN_OR_RETURN(out[rel.generic_string()], hash_base64(it->path(), algorithm, digests));
  }
  return out;
}

Status verify_digest(const std::filesystem::path& variant_dir, const Metadata& metadata, FileDigests* digests) {
  KH_ASSIGN_OR_RETURN(auto actual, compute_digest(variant_dir, metadata.digest_algorithm, digests));
  const auto violations =
      compare_digests(metadata.digest_algorithm, metadata.digest, metadata.digest_algorithm, actual);
  if (violations.empty()) return {};
  return unexpected(ErrorCode::kIntegrityMismatch, digest_mismatch_message(variant_dir, violations));
}

}  // namespace kernelhub
