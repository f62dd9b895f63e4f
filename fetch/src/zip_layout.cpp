#include "kernelhub/fetch/internal/zip_layout.hpp"

#include <algorithm>
#include <set>

#include "kernelhub/base/internal/zip_archive.hpp"
#include "kernelhub/signing/internal/manifest.hpp"

namespace kernelhub {

namespace {

constexpr std::uint16_t kStored = 0;
constexpr std::uint16_t kDeflated = 8;

std::string shown(std::string_view name) {
  std::string out;
  for (const char c : name.substr(0, 200)) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) ? '?' : c;
  return out;
}

std::optional<std::string> member_problem(const ZipMember& member) {
  if (auto problem = zip_member_name_problem(member.name)) return problem;
  if (!member.utf8_name && std::any_of(member.name.begin(), member.name.end(),
                                       [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    return std::string("a name in the legacy code page 437 (no UTF-8 flag), which readers decode differently");
  }
  const std::uint32_t type = member.unix_mode & 0170000;
  if (member.is_symlink()) return std::string("a symbolic link, which extracting tools follow out of the package");
  if (type != 0 && type != 0100000 && type != 0040000) {
    return std::string("a device, FIFO or socket, not a file");
  }
  if (!member.is_directory() && member.method != kStored && member.method != kDeflated) {
    return "compressed with method " + std::to_string(member.method) + ", which zipimport cannot read";
  }
  return std::nullopt;
}

Unexpected hostile(const std::filesystem::path& zip, const std::string& why) {
  return unexpected(ErrorCode::kCorruptFile,
                    "the kernel's package archive `" + zip.string() + "` " + why +
                        ". Do not load it: the archive was damaged, doctored or built by a broken tool; ask the "
                        "publisher to rebuild it (kernel-builder, or hub-publish --layout zip)");
}

}  // namespace

std::filesystem::path zip_package_path(const std::filesystem::path& variant_dir, std::string_view id) {
  return variant_dir / (std::string(id) + ".zip");
}

std::optional<std::string> zip_member_name_problem(std::string_view name) {
  std::string_view path = name;
  if (path.ends_with('/')) path.remove_suffix(1);  // a directory entry
  if (path.starts_with('/')) return std::string("an absolute path, outside the package");
  if (path == ".." || path.starts_with("../") || path.ends_with("/..") || path.find("/../") != path.npos) {
    return std::string("a path that climbs out of the package with `..`");
  }
  if (path.find(':') != path.npos) return std::string("a path with a `:` (a drive or stream name)");
  if (!signing::is_safe_manifest_path(path)) {
    return std::string("not a plain relative path (an empty or `.` segment, `\\`, a control character or not UTF-8)");
  }
  return std::nullopt;
}

Status check_zip_package(const std::filesystem::path& variant_dir, const Metadata& metadata) {
  if (metadata.build_layout != BuildLayout::kZip) return {};
  const std::filesystem::path zip = zip_package_path(variant_dir, metadata.id);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(zip, ec)) {
    return unexpected(ErrorCode::kNotFound, "metadata.json of `" + variant_dir.string() +
                                                "` says \"build-layout\": \"zip\", but the package archive `" +
                                                zip.filename().string() +
                                                "` is not in it; download the variant again or ask the publisher");
  }
  auto archive = ZipArchive::read(zip);
  if (!archive) return unexpected(archive.error().with_context("the kernel's package archive"));
  std::set<std::string_view> names;
  bool has_init = false;
  for (const ZipMember& member : archive->members()) {
    if (auto problem = member_problem(member))
      return hostile(zip, "has member `" + shown(member.name) + "`: " + *problem);
    if (!names.insert(member.name).second) return hostile(zip, "has member `" + shown(member.name) + "` twice");
    has_init = has_init || member.name == "__init__.py";
  }
  if (!has_init) {
    return unexpected(ErrorCode::kCorruptFile, "the kernel's package archive `" + zip.string() +
                                                   "` has no __init__.py at its root, so it is not a Python package; "
                                                   "ask the publisher to rebuild it (kernel-builder, or hub-publish "
                                                   "--layout zip)");
  }
  return {};
}

}  // namespace kernelhub
