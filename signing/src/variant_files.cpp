#include "kernelhub/signing/internal/variant_files.hpp"

#include <algorithm>

#include "kernelhub/client/internal/cache_layout.hpp"

namespace kernelhub::signing {

namespace fs = std::filesystem;

namespace {

bool excluded(const fs::path& rel, SignatureLayout layout) {
  if (layout == SignatureLayout::kV1Inside && rel == kV1SignatureFileName) return true;
  return rel.extension() == ".pyc" && rel.has_parent_path() && rel.parent_path().filename() == "__pycache__";
}

std::string describe(fs::file_type type) {
  switch (type) {
    case fs::file_type::directory: return "a directory";
    case fs::file_type::block: return "a block device";
    case fs::file_type::character: return "a character device";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

}  // namespace

std::optional<fs::path> snapshot_blobs_dir(const fs::path& dir) {
  const auto repo_dir = client::CacheLayout::repo_dir_of_snapshot_path(dir);
  if (!repo_dir) return std::nullopt;
  return client::CacheLayout::blobs_dir_of(*repo_dir);
}

std::optional<std::string> non_regular_file_problem(const fs::path& entry, const std::optional<fs::path>& blobs) {
  std::error_code ec;
  const fs::file_status link_status = fs::symlink_status(entry, ec);
  if (ec) return "cannot be read (" + ec.message() + ")";
  if (fs::is_regular_file(link_status)) return std::nullopt;
  if (!fs::is_symlink(link_status)) return "is " + describe(link_status.type()) + ", not a regular file";
  const fs::path target = fs::read_symlink(entry, ec);
  const std::string what = "is a symlink to `" + target.string() + "`";
  if (!blobs) return what + "; a signed variant holds regular files only";
  const fs::path resolved = fs::canonical(entry, ec);
  const fs::path blobs_real = fs::canonical(*blobs, ec);
  if (ec || resolved.parent_path() != blobs_real || !fs::is_regular_file(fs::symlink_status(resolved, ec))) {
    return what + ", which is not a file in this repo's cache blobs/ (`" + blobs->string() + "`)";
  }
  return std::nullopt;
}

Result<VariantFiles> hash_variant_files(const fs::path& dir, FileDigests* digests, SignatureLayout layout) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec)) && !fs::is_directory(dir, ec)) {
    return unexpected(ErrorCode::kNotFound, "variant directory `" + dir.string() + "` does not exist");
  }
  const auto blobs = snapshot_blobs_dir(dir);
  VariantFiles out;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
  if (ec) return unexpected(os_error("cannot list `" + dir.string() + "`", ec.value()));
  for (; it != end; it.increment(ec)) {
    if (ec) return unexpected(os_error("cannot list `" + dir.string() + "`", ec.value()));
    const fs::path rel = it->path().lexically_relative(dir);
    const std::string name = rel.generic_string();
    const fs::file_status status = it->symlink_status(ec);
    if (ec) return unexpected(os_error("cannot stat `" + it->path().string() + "`", ec.value()));
    if (fs::is_directory(status)) {
      if (!is_safe_manifest_path(name)) out.problems.push_back("directory name `" + name + "` is not allowed");
      continue;
    }
    if (excluded(rel, layout)) continue;
    if (!is_safe_manifest_path(name)) {
      out.problems.push_back("`" + name + "` is a name a manifest cannot hold (control character, `\\` or not UTF-8)");
      continue;
    }
    if (auto problem = non_regular_file_problem(it->path(), blobs)) {
      out.problems.push_back("`" + name + "` " + *problem);
      continue;
    }
    KH_ASSIGN_OR_RETURN(FileHash hash, hash_file(it->path(), digests));
    out.files.push_back(ManifestFile{name, hash.size, hash.digest});
  }
  std::sort(out.files.begin(), out.files.end(),
            [](const ManifestFile& a, const ManifestFile& b) { return a.path < b.path; });
  return out;
}

}  // namespace kernelhub::signing
