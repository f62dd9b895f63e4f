#include "dependency_download.hpp"

#include <algorithm>

#include "kernelhub/fetch/internal/kernel_walk.hpp"
#include "kernelhub/fetch/metadata.hpp"
#include "kernelhub/resolver/internal/closest_miss.hpp"
#include "kernelhub/resolver/select.hpp"

namespace kernelhub::cli {

namespace {

constexpr auto kKernel = RepoType::kKernel;

// Downloads each kernel the walk reaches (kernel_walk.hpp, the walk get_kernel's tree takes) but
// the first, which the command downloaded already.
class Downloader : public KernelWalkVisitor {
 public:
  Downloader(std::vector<KernelDependency> needed, const DependencyDownload& request, const client::HubClient& hub)
      : needed_(std::move(needed)), request_(request), hub_(hub) {}

  Result<std::vector<KernelDependency>> enter(const KernelDependency& dependency) override {
    if (!kernel_entered_) {
      kernel_entered_ = true;
      return std::move(needed_);
    }
    KH_ASSIGN_OR_RETURN(Downloaded downloaded, download(dependency));
    KH_ASSIGN_OR_RETURN(std::vector<KernelDependency> needed, dependencies_of(downloaded.paths));
    entered_.push_back(std::move(downloaded.json));
    return needed;
  }

  void leave(const KernelDependency&, const KernelDependency* needed_by, std::vector<std::size_t>) override {
    if (needed_by == nullptr) return;  // the kernel itself
    nlohmann::json json = std::move(entered_.back());
    entered_.pop_back();
    json["needed_by"] = needed_by->repo_id;
    out_.push_back(std::move(json));
  }

  nlohmann::json take() { return std::move(out_); }

 private:
  struct Downloaded {
    nlohmann::json json;
    std::vector<std::filesystem::path> paths;
  };

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

  std::vector<KernelDependency> needed_;  // by the kernel itself
  const DependencyDownload& request_;
  const client::HubClient& hub_;
  bool kernel_entered_ = false;
  std::vector<nlohmann::json> entered_;  // the dependencies downloaded and not yet left, in the walk's path
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
  Downloader downloader(needed, request, hub);
  KH_RETURN_IF_ERROR(walk_kernel_tree(kernel, downloader));
  return downloader.take();
}

}  // namespace kernelhub::cli
