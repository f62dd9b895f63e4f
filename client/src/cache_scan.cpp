#include "kernelhub/client/internal/cache_scan.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <variant>

#include "kernelhub/client/internal/cache_layout.hpp"

namespace kernelhub::client {

namespace {

namespace fs = std::filesystem;

// What an OS leaves in folders; huggingface_hub skips them too (FILES_TO_IGNORE).
bool ignored_name(const std::string& name) {
  return name == ".DS_Store" || name == "Thumbs.db" || name == "desktop.ini";
}

double seconds(const timespec& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

struct BlobStat {
  std::uint64_t size = 0;
  double accessed = 0;
  double modified = 0;
};

std::optional<BlobStat> stat_of(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return BlobStat{static_cast<std::uint64_t>(st.st_size), seconds(st.st_atim), seconds(st.st_mtim)};
}

struct Totals {
  std::uint64_t size = 0;
  double modified = 0;
  double accessed = 0;
};

// Size and latest times of some blobs, as huggingface_hub adds them up; with none, `folder`'s times.
Totals add_up(const std::vector<const BlobStat*>& blobs, const fs::path& folder) {
  Totals out;
  for (const BlobStat* stat : blobs) {
    out.size += stat->size;
    out.modified = std::max(out.modified, stat->modified);
    out.accessed = std::max(out.accessed, stat->accessed);
  }
  if (blobs.empty()) {
    if (const auto stat = stat_of(folder)) {
      out.modified = stat->modified;
      out.accessed = stat->accessed;
    }
  }
  return out;
}

std::string read_raw(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Why a repo folder is not a whole repo, as huggingface_hub's CorruptedCacheException says it.
struct Corrupted {
  std::string why;
};

// One repo folder, or why it is left out.
std::variant<CachedRepo, Corrupted> scan_repo(const fs::path& dir, RepoType type, RepoId repo) {
  std::error_code ec;
  CachedRepo out{type, std::move(repo), dir, {}, 0, 0, 0, 0};
  const fs::path snapshots = CacheLayout::snapshots_dir_of(dir);
  const fs::path refs = CacheLayout::refs_dir_of(dir);
  if (!fs::is_directory(snapshots, ec))
    return Corrupted{"Snapshots dir doesn't exist in cached repo: " + snapshots.string()};

  std::map<std::string, std::set<std::string>> refs_by_commit;
  if (fs::exists(refs, ec)) {
    if (!fs::is_directory(refs, ec)) return Corrupted{"Refs directory cannot be a file: " + refs.string()};
    for (auto it = fs::recursive_directory_iterator(refs, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (it->is_directory(ec) || ignored_name(it->path().filename().string())) continue;
      refs_by_commit[read_raw(it->path())].insert(it->path().lexically_relative(refs).generic_string());
    }
  }

  std::map<fs::path, BlobStat> blobs;
  std::vector<fs::path> revision_dirs;
  for (const auto& entry : fs::directory_iterator(snapshots, ec)) {
    if (ignored_name(entry.path().filename().string())) continue;
    if (!entry.is_directory(ec)) return Corrupted{"Snapshots folder corrupted. Found a file: " + entry.path().string()};
    revision_dirs.push_back(entry.path());
  }
  std::sort(revision_dirs.begin(), revision_dirs.end());
  for (const fs::path& revision_dir : revision_dirs) {
    CachedRevision revision;
    revision.commit = revision_dir.filename().string();
    revision.snapshot = revision_dir;
    std::set<fs::path> revision_blobs;
    for (auto it = fs::recursive_directory_iterator(revision_dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (it->is_directory(ec)) continue;
      const fs::path& file = it->path();
      // The first hop of a link: the repo's blob, as huggingface_hub counts it.
      fs::path blob = file;
      if (fs::is_symlink(file, ec)) blob = (file.parent_path() / fs::read_symlink(file, ec)).lexically_normal();
      auto known = blobs.find(blob);
      if (known == blobs.end()) {
        const auto stat = stat_of(blob);
        if (!stat) return Corrupted{"Blob missing (broken symlink): " + blob.string()};
        known = blobs.emplace(blob, *stat).first;
      }
      revision.files.push_back({file.lexically_relative(revision_dir).generic_string(), blob, known->second.size});
      revision_blobs.insert(blob);
    }
    std::sort(revision.files.begin(), revision.files.end(),
              [](const CachedFile& a, const CachedFile& b) { return a.path < b.path; });
    std::vector<const BlobStat*> stats;
    for (const fs::path& blob : revision_blobs) stats.push_back(&blobs.at(blob));
    const Totals totals = add_up(stats, revision_dir);
    revision.size_on_disk = totals.size;
    revision.last_modified = totals.modified;
    revision.last_accessed = totals.accessed;
    if (const auto refs_here = refs_by_commit.extract(revision.commit)) {
      revision.refs.assign(refs_here.mapped().begin(), refs_here.mapped().end());
    }
    out.revisions.push_back(std::move(revision));
  }
  if (!refs_by_commit.empty()) {
    std::string listed;
    for (const auto& [commit, names] : refs_by_commit) {
      for (const auto& name : names) listed += (listed.empty() ? "" : ", ") + name + " -> " + commit;
    }
    return Corrupted{"Reference(s) refer to missing commit hashes: " + listed + " (" + dir.string() + ")"};
  }
  out.blobs = blobs.size();
  std::vector<const BlobStat*> stats;
  for (const auto& [_, stat] : blobs) stats.push_back(&stat);
  const Totals totals = add_up(stats, dir);
  out.size_on_disk = totals.size;
  out.last_modified = totals.modified;
  out.last_accessed = totals.accessed;
  return out;
}

}  // namespace

Result<CacheScan> scan_cache(const fs::path& root, std::optional<RepoType> type) {
  std::error_code ec;
  if (!fs::exists(root, ec)) {
    return unexpected(ErrorCode::kNotFound, "cache directory `" + root.string() + "` does not exist");
  }
  if (!fs::is_directory(root, ec)) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "`" + root.string() + "` is a file, not a Hugging Face cache directory");
  }
  CacheScan out;
  out.root = root;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    // Only repo folders are read: bookkeeping (.locks, CACHEDIR.TAG, the shared blobs/ store,
    // kernels' .verified-kernels receipts) and other types' repos are passed over.
    auto parsed = CacheLayout::parse_repo_folder(name);
    if (!parsed || (type && parsed->type != *type)) continue;
    auto scanned = scan_repo(entry.path(), parsed->type, parsed->repo);
    if (auto* corrupted = std::get_if<Corrupted>(&scanned)) {
      out.warnings.push_back(std::move(corrupted->why));
    } else {
      out.repos.push_back(std::get<CachedRepo>(std::move(scanned)));
    }
  }
  if (ec) return unexpected(os_error("listing the cache directory `" + root.string() + "`", ec.value()));
  std::sort(out.repos.begin(), out.repos.end(),
            [](const CachedRepo& a, const CachedRepo& b) { return a.repo.to_string() < b.repo.to_string(); });
  return out;
}

}  // namespace kernelhub::client
