#include "dependency_download.hpp"

#include <algorithm>

#include "kernelhub/fetch/metadata.hpp"
#include "kernelhub/resolver/closest_miss.hpp"
#include "kernelhub/resolver/select.hpp"

namespace kernelhub::cli {

namespace {

constexpr auto kKernel = RepoType::kKernel;

class Downloader {
 public:
  Downloader(const DependencyDownload& request, const client::HubClient& hub) : request_(request), hub_(hub) {}

  Status visit(const KernelDependency& dependency) {
    if (dependency == root_ || std::find(path_.begin(), path_.end(), dependency) != path_.end()) {
      return unexpected(ErrorCode::kDependencyCycle, "kernel dependency cycle: " + chain(dependency.repo_id) +
                                                         ". A kernel cannot depend on itself, directly or through "
                                                         "other kernels");
    }
    if (std::find(done_.begin(), done_.end(), dependency) != done_.end()) return {};
    path_.push_back(dependency);
    auto downloaded = download(dependency);
    if (!downloaded) return unexpected(downloaded.error().with_context("kernel dependency " + chain()));
    auto needed = dependencies_of(downloaded->paths);
    if (!needed) return unexpected(needed.error().with_context("kernel dependency " + chain()));
    for (const KernelDependency& next : *needed) KH_RETURN_IF_ERROR(visit(next));
    path_.pop_back();
    downloaded->json["needed_by"] = path_.empty() ? root_.repo_id : path_.back().repo_id;
    out_.push_back(std::move(downloaded->json));
    done_.push_back(dependency);
    return {};
  }

  void set_root(KernelDependency root) { root_ = std::move(root); }
  nlohmann::json take() { return std::move(out_); }

 private:
  struct Downloaded {
    nlohmann::json json;
    std::vector<std::filesystem::path> paths;
  };

  // "kernel -> a -> b", then `last` when given.
  std::string chain(std::string_view last = {}) const {
    std::string text = root_.repo_id;
    for (const auto& on_path : path_) text += " -> " + on_path.repo_id;
    if (!last.empty()) text += " -> " + std::string(last);
    return text;
  }

  Result<Downloaded> download(const KernelDependency& dependency) const {
    KH_ASSIGN_OR_RETURN(const client::RepoId repo, client::RepoId::parse(dependency.repo_id));
    const std::string revision = dependency.wanted();
    KH_ASSIGN_OR_RETURN(const std::string commit, hub_.resolve_revision(repo, kKernel, revision));
    std::vector<std::string> variants;
    if (request_.variants != DependencyVariants::kWholeRepo) {
      KH_ASSIGN_OR_RETURN(std::vector<std::string> names, hub_.list_variants(repo, kKernel, commit));
      if (request_.variants == DependencyVariants::kAll) {
        variants = std::move(names);
      } else {
        const auto decisions = resolver::select(names, *request_.environment, request_.loadable);
        const resolver::Decision* best = resolver::chosen(decisions);
        if (best == nullptr) {
          return unexpected(ErrorCode::kNoCompatibleVariant,
                            resolver::no_variant_message("`" + dependency.describe() + "`", decisions,
                                                         *request_.environment, request_.loadable));
        }
        variants.push_back(best->name);
      }
    }
    client::DownloadOptions options;
    options.quiet = request_.quiet;
    options.asked_revision = revision;
    Downloaded out;
    std::uint64_t downloaded_bytes = 0;
    int requests = 0;
    const std::vector<std::string> whole_repo{""};
    for (const std::string& variant : variants.empty() ? whole_repo : variants) {
      KH_ASSIGN_OR_RETURN(client::Snapshot snapshot,
                          variant.empty() ? hub_.download_prefixes(repo, kKernel, commit, {}, options)
                                          : hub_.download_variant(repo, kKernel, commit, variant, options));
      out.paths.push_back(snapshot.path);
      downloaded_bytes += snapshot.downloaded_bytes;
      requests += snapshot.requests;
    }
    std::vector<std::string> paths;
    for (const auto& p : out.paths) paths.push_back(p.string());
    out.json = {{"repo", dependency.repo_id}, {"revision", revision}, {"commit", commit},
                {"variants", variants},       {"paths", paths},       {"downloaded_bytes", downloaded_bytes},
                {"requests", requests}};
    return out;
  }

  const DependencyDownload& request_;
  const client::HubClient& hub_;
  KernelDependency root_;               // the kernel downloaded first
  std::vector<KernelDependency> path_;  // from the kernel's first dependency to the one visited
  std::vector<KernelDependency> done_;
  nlohmann::json out_ = nlohmann::json::array();
};

// The variant directories under `path`: itself when it holds metadata.json, else its build/*.
std::vector<std::filesystem::path> variant_dirs(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::exists(path / "metadata.json", ec)) return {path};
  std::vector<std::filesystem::path> dirs;
  for (const auto& entry : std::filesystem::directory_iterator(path / "build", ec)) {
    if (entry.is_directory(ec)) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

}  // namespace

Result<std::vector<KernelDependency>> dependencies_of(const std::vector<std::filesystem::path>& downloaded) {
  std::vector<KernelDependency> out;
  for (const auto& path : downloaded) {
    for (const auto& dir : variant_dirs(path)) {
      auto metadata = Metadata::read(dir);
      if (!metadata && metadata.error().code == ErrorCode::kNotFound) continue;  // built before metadata.json
      if (!metadata) return unexpected(metadata.error());
      for (const KernelDependency& dependency : metadata->kernel_depends) {
        if (std::find(out.begin(), out.end(), dependency) == out.end()) out.push_back(dependency);
      }
    }
  }
  return out;
}

Result<nlohmann::json> download_dependencies(const KernelDependency& kernel,
                                             const std::vector<KernelDependency>& needed,
                                             const DependencyDownload& request, const client::HubClient& hub) {
  Downloader downloader(request, hub);
  downloader.set_root(kernel);
  for (const KernelDependency& dependency : needed) KH_RETURN_IF_ERROR(downloader.visit(dependency));
  return downloader.take();
}

}  // namespace kernelhub::cli
