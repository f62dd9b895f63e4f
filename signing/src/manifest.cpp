#include "kernelhub/signing/internal/manifest.hpp"

#include <algorithm>
#include <charconv>

namespace kernelhub::signing {

namespace {

constexpr std::size_t kMaxTokenSize = 256;
constexpr std::size_t kMaxPathSize = 4096;

// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool is_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      n = 1, cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2, cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    static constexpr std::uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n + 1;
  }
  return true;
}

bool is_hex64(std::string_view s) {
  return s.size() == 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

Sha256Digest digest_from_hex(std::string_view hex) {
  Sha256Digest out{};
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<std::uint8_t>((nibble(hex[2 * i]) << 4) | nibble(hex[2 * i + 1]));
  }
  return out;
}

// Canonical decimal: digits only, no sign, no leading zero (except "0"), fits in 64 bits.
std::optional<std::uint64_t> parse_decimal(std::string_view s) {
  if (s.empty() || s.size() > 20 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

Unexpected corrupt(std::string_view why) {
  return unexpected(ErrorCode::kCorruptFile, "the signed manifest is malformed: " + std::string(why));
}

}  // namespace

bool is_manifest_token(std::string_view text) {
  if (text.empty() || text.size() > kMaxTokenSize) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u > 0x20 && u != 0x7f;
  });
}

bool is_safe_manifest_path(std::string_view path) {
  if (path.empty() || path.size() > kMaxPathSize || path.front() == '/' || !is_utf8(path)) return false;
  for (char c : path) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == '\\') return false;
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = std::min(path.find('/', start), path.size());
    const std::string_view segment = path.substr(start, slash - start);
    if (segment.empty() || segment == "." || segment == "..") return false;
    start = slash + 1;
  }
  return true;
}

Status Manifest::validate() const {
  auto bad = [](std::string why) { return unexpected(ErrorCode::kInvalidArgument, std::move(why)); };
  if (!is_manifest_token(identity.repo) || std::count(identity.repo.begin(), identity.repo.end(), '/') != 1) {
    return bad("repo `" + identity.repo + "` is not one ORG/NAME token");
  }
  if (!is_manifest_token(identity.variant)) return bad("variant `" + identity.variant + "` is not one token");
  if (identity.version && *identity.version < 0) return bad("version must not be negative");
  if (!identity.source_commit.empty() &&
      (!is_manifest_token(identity.source_commit) || identity.source_commit == "none")) {
    return bad("source commit `" + identity.source_commit + "` is not one token");
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (!is_safe_manifest_path(files[i].path)) return bad("path `" + files[i].path + "` is not a safe relative path");
    if (i > 0 && !(files[i - 1].path < files[i].path)) {
      return bad("files are not sorted and unique at `" + files[i].path + "`");
    }
  }
  return {};
}

std::string Manifest::to_bytes() const {
  std::string out;
  out.reserve(256 + files.size() * 120);
  out += kManifestTag;
  out += "\nrepo " + identity.repo;
  out += "\nversion " + (identity.version ? std::to_string(*identity.version) : std::string("none"));
  out += "\nvariant " + identity.variant;
  out += "\nsource-commit " + (identity.source_commit.empty() ? std::string("none") : identity.source_commit);
  out += "\nserial " + std::to_string(serial);
  out += '\n';
  for (const auto& file : files) {
    out += "file " + to_hex(file.sha256) + ' ' + std::to_string(file.size) + ' ' + file.path + '\n';
  }
  return out;
}

Result<Manifest> Manifest::parse(std::string_view bytes) {
  if (bytes.size() > kMaxManifestSize) return corrupt("it is larger than 16 MiB");
  if (bytes.empty() || bytes.back() != '\n') return corrupt("it does not end with a newline");
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start < bytes.size();) {
    const std::size_t end = bytes.find('\n', start);
    lines.push_back(bytes.substr(start, end - start));
    start = end + 1;
  }
  if (lines.front() != kManifestTag) {
    return corrupt("its first line is `" + std::string(lines.front().substr(0, 64)) + "`, not `" +
                   std::string(kManifestTag) + "` (an unknown format or version; a newer kernelhub may read it)");
  }
  static constexpr std::string_view kHeaders[] = {"repo ", "version ", "variant ", "source-commit ", "serial "};
  if (lines.size() < 1 + std::size(kHeaders)) return corrupt("its header is incomplete");
  std::string_view values[std::size(kHeaders)];
  for (std::size_t i = 0; i < std::size(kHeaders); ++i) {
    if (!lines[1 + i].starts_with(kHeaders[i])) {
      return corrupt("line " + std::to_string(i + 2) + " should start with `" + std::string(kHeaders[i]) + "`");
    }
    values[i] = lines[1 + i].substr(kHeaders[i].size());
  }
  Manifest m;
  m.identity.repo = std::string(values[0]);
  if (values[1] != "none") {
    const auto version = parse_decimal(values[1]);
    if (!version || *version > 1'000'000'000)
      return corrupt("version `" + std::string(values[1]) + "` is not a number");
    m.identity.version = static_cast<int>(*version);
  }
  m.identity.variant = std::string(values[2]);
  if (values[3] != "none") m.identity.source_commit = std::string(values[3]);
  const auto serial = parse_decimal(values[4]);
  if (!serial) return corrupt("serial `" + std::string(values[4]) + "` is not a number");
  m.serial = *serial;
  for (std::size_t i = 1 + std::size(kHeaders); i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (!line.starts_with("file ")) return corrupt("line " + std::to_string(i + 1) + " is not a `file` line");
    line.remove_prefix(5);
    const std::size_t space1 = line.find(' ');
    const std::size_t space2 = space1 == std::string_view::npos ? space1 : line.find(' ', space1 + 1);
    if (space2 == std::string_view::npos) return corrupt("line " + std::to_string(i + 1) + " has too few fields");
    const std::string_view hex = line.substr(0, space1);
    const auto size = parse_decimal(line.substr(space1 + 1, space2 - space1 - 1));
    if (!is_hex64(hex)) return corrupt("line " + std::to_string(i + 1) + " has no lower-case sha256");
    if (!size) return corrupt("line " + std::to_string(i + 1) + " has no size");
    m.files.push_back(ManifestFile{std::string(line.substr(space2 + 1)), *size, digest_from_hex(hex)});
  }
  auto valid = m.validate();
  if (!valid) return corrupt(valid.error().message);
  if (m.to_bytes() != bytes) return corrupt("it is not in canonical form");
  return m;
}

}  // namespace kernelhub::signing
