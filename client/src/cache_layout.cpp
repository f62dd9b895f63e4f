#include "kernelhub/client/internal/cache_layout.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>

#include "kernelhub/base/internal/atomic_file.hpp"
#include "kernelhub/base/internal/hub_names.hpp"
#include "kernelhub/base/internal/random_name.hpp"
#include "kernelhub/base/internal/sha256.hpp"

namespace kernelhub::client {

namespace fs = std::filesystem;

namespace {

void collect_refs(const fs::path& dir, const std::string& prefix, std::vector<std::string>& out) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = prefix + it->path().filename().string();
    if (it->is_directory(ec)) {
      collect_refs(it->path(), name + "/", out);
    } else {
      out.push_back(name);
    }
  }
}

}  // namespace

bool is_commit_hash(std::string_view text) {
  return is_lower_hex(text, 40);
}

CacheLayout::CacheLayout(fs::path cache_root, RepoType type, RepoId repo)
    : root_(std::move(cache_root)),
      type_(type),
      repo_(std::move(repo)),
      repo_dir_(root_ / repo_folder_name(type_, repo_)) {}

std::string CacheLayout::repo_folder_name(RepoType type, const RepoId& repo) {
  return std::string(api_segment(type)) + "--" + repo.org + "--" + repo.name;
}

Result<CacheLayout::Parsed> CacheLayout::parse_repo_folder(std::string_view folder) {
  for (RepoType type : kAllRepoTypes) {
    const std::string prefix = std::string(api_segment(type)) + "--";
    if (!folder.starts_with(prefix)) continue;
    const std::string_view rest = folder.substr(prefix.size());
    const auto sep = rest.find("--");
    if (sep == std::string_view::npos) break;
    auto repo = RepoId::parse(std::string(rest.substr(0, sep)) + "/" + std::string(rest.substr(sep + 2)));
    if (!repo) return unexpected(repo.error());
    return Parsed{type, *repo};
  }
  return unexpected(ErrorCode::kInvalidArgument,
                    "`" + std::string(folder) + "` is not a cache repo folder (expected e.g. kernels--org--name)");
}

std::string CacheLayout::blob_link_target(std::string_view path_in_repo, std::string_view etag) {
  std::string target = "../../";
  for (char c : path_in_repo) {
    if (c == '/') target += "../";
  }
  return target + "blobs/" + std::string(etag);
}

std::optional<fs::path> CacheLayout::repo_dir_of_snapshot_path(const fs::path& path) {
  const fs::path absolute = fs::absolute(path).lexically_normal();
  for (fs::path p = absolute; p.has_relative_path(); p = p.parent_path()) {
    if (p.parent_path() == snapshots_dir_of(p.parent_path().parent_path())) return p.parent_path().parent_path();
  }
  return std::nullopt;
}

fs::path CacheLayout::blob_path(std::string_view etag) const {
  return blobs_dir() / std::string(etag);
}

fs::path CacheLayout::incomplete_path(std::string_view etag) const {
  return blobs_dir() / (std::string(etag) + "." + random_hex(4) + ".incomplete");
}

fs::path CacheLayout::partial_path(std::string_view etag) const {
  return blobs_dir() / (std::string(etag) + ".incomplete");
}

fs::path CacheLayout::snapshot_dir(std::string_view commit) const {
  return snapshots_dir() / std::string(commit);
}

fs::path CacheLayout::snapshot_path(std::string_view commit, std::string_view path) const {
  return snapshot_dir(commit) / std::string(path);
}

fs::path CacheLayout::ref_path(std::string_view revision) const {
  return refs_dir() / std::string(revision);
}

fs::path CacheLayout::no_exist_path(std::string_view commit, std::string_view path) const {
  return repo_dir_ / ".no_exist" / std::string(commit) / std::string(path);
}

fs::path CacheLayout::tree_path(std::string_view commit) const {
  return repo_dir_ / "trees" / (std::string(commit) + ".json");
}

fs::path CacheLayout::lock_path(std::string_view etag) const {
  return root_ / ".locks" / repo_folder_name(type_, repo_) / (std::string(etag) + ".lock");
}

Result<std::optional<std::string>> CacheLayout::read_ref(std::string_view revision) const {
  if (!hub_names::validate_revision(revision)) return std::optional<std::string>();
  const fs::path path = ref_path(revision);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::optional<std::string>();  // absent (or a folder of nested refs)
  // A commit and the whitespace around it; anything longer is not a ref file.
  char buffer[256];
  ssize_t n = 0;
  while (true) {
    n = ::read(fd, buffer, sizeof buffer);
    if (n >= 0 || errno != EINTR) break;
  }
  const int read_errno = errno;
  ::close(fd);
  if (n < 0) {
    // EISDIR: `refs/refs` when refs/refs/pr/1 exists; not a ref of that name.
    if (read_errno == EISDIR) return std::optional<std::string>();
    return unexpected(os_error("cannot read `" + path.string() + "`", read_errno));
  }
  std::string_view text(buffer, static_cast<std::size_t>(n));
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  const std::size_t last = text.find_last_not_of(" \t\r\n");
  const std::string_view commit = first == std::string_view::npos ? "" : text.substr(first, last - first + 1);
  if (!is_commit_hash(commit)) {
    std::string shown;
    for (char c : commit.substr(0, 48)) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
    return unexpected(ErrorCode::kCorruptFile,
                      "`" + path.string() + "` should hold the commit that " + std::string(revision) + " of " +
                          repo_.to_string() + " points at, but holds `" + shown + (commit.size() > 48 ? "...`" : "`") +
                          "; delete it (an online fetch of the kernel by that revision writes it again)");
  }
  return std::optional<std::string>(std::string(commit));
}

Status CacheLayout::write_ref(std::string_view revision, std::string_view commit) const {
  KH_RETURN_IF_ERROR(hub_names::validate_revision(revision));
  // A ref file that is not a commit is replaced by the commit the Hub just named.
  if (auto current = read_ref(revision); current && *current == std::string(commit)) return {};
  return write_file_atomic(ref_path(revision), commit);
}

Status CacheLayout::link_snapshot(std::string_view commit, std::string_view path, std::string_view etag) const {
  const fs::path link = snapshot_path(commit, path);
  const std::string target = blob_link_target(path, etag);
  std::error_code ec;
  fs::create_directories(link.parent_path(), ec);
  char existing[512];
  const ssize_t n = ::readlink(link.c_str(), existing, sizeof existing);
  if (n > 0 && std::string_view(existing, static_cast<std::size_t>(n)) == target) return {};
  const fs::path temp = temp_path_beside(link);
  if (::symlink(target.c_str(), temp.c_str()) != 0) {
    return unexpected(os_error("cannot create symlink `" + temp.string() + "`", errno));
  }
  return rename_into_place(temp, link);
}

Status CacheLayout::mark_missing(std::string_view commit, std::string_view path) const {
  if (!hub_names::validate_repo_path(path)) return {};
  const fs::path marker = no_exist_path(commit, path);
  std::error_code ec;
  fs::create_directories(marker.parent_path(), ec);
  const int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return unexpected(os_error("cannot create `" + marker.string() + "`", errno));
  ::close(fd);
  return {};
}

void CacheLayout::ensure_cachedir_tag() const {
  const fs::path tag = cachedir_tag_path();
  struct stat st {};
  if (::stat(tag.c_str(), &st) == 0) return;
  // The standard signature line (https://bford.info/cachedir/), as huggingface_hub writes it.
  (void)write_file_atomic(tag,
                          "Signature: 8a477f597d28d172789f06886806bc55\n"
                          "# This file is a cache directory tag created by huggingface_hub.\n"
                          "# For information about cache directory tags, see:\n"
                          "#\thttps://bford.info/cachedir/\n");
}

std::vector<std::string> CacheLayout::list_refs() const {
  std::vector<std::string> out;
  collect_refs(refs_dir(), "", out);
  // Not refs: our own in-flight writes (*.tmp) and those of the kernels package (.<name>.<random>,
  // from tempfile.mkstemp), left behind by a crash.
  std::erase_if(out, [](const std::string& name) {
    return name.ends_with(".tmp") || fs::path(name).filename().string().starts_with(".");
  });
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> CacheLayout::list_snapshots() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(snapshots_dir(), ec), end; !ec && it != end; it.increment(ec)) {
    out.push_back(it->path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kernelhub::client
