// kernelhub cache ls [--cache-dir DIR] [--json] [--show-warnings] [--no-truncate]: the kernel
// versions in the Hugging Face cache and the build variants each holds, as `kernels cache ls`
// (kernels 0.19.1, cli/cache.py) lists them: kernel repos that have a `v<N>` ref, one row per
// version, with the size, access and modification times huggingface_hub's scan_cache_dir gives
// (client/cache_scan.hpp) and the variant folders that hold files and parse as variant names.
// The --json object is kernels' ({"cache_dir", "repos": [{"repo_id", "size_on_disk",
// "last_accessed", "last_modified", "versions": [{"version", "size_on_disk", "last_accessed",
// "last_modified", "variants"}]}]}), with each repo's "path" and each version's "commit" added.
#include <cmath>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "error_json.hpp"
#include "kernelhub/client/internal/cache_scan.hpp"
#include "kernelhub/client/internal/settings.hpp"
#include "kernelhub/resolver/variant.hpp"

namespace kernelhub::cli {

namespace {

struct CacheLsArguments {
  std::optional<std::string> cache_dir;
  bool json = false;
  bool show_warnings = false;
  bool no_truncate = false;
};

// "1.2M": huggingface_hub's _format_size (powers of 1000, one decimal).
std::string format_size(std::uint64_t bytes) {
  double value = static_cast<double>(bytes);
  for (const char* unit : {"", "K", "M", "G", "T", "P", "E", "Z"}) {
    if (std::fabs(value) < 1000.0) {
      char text[32];
      std::snprintf(text, sizeof text, "%3.1f%s", value, unit);
      return text;
    }
    value /= 1000.0;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1fY", value);
  return text;
}

// "3 days ago": huggingface_hub's format_timesince.
std::string format_timesince(double then) {
  const double delta = static_cast<double>(std::time(nullptr)) - then;
  if (delta < 20) return "a few seconds ago";
  struct Chunk {
    const char* label;
    double divider;
    long max;  // -1: no limit
  };
  static constexpr Chunk kChunks[] = {{"second", 1, 59},        {"minute", 60, 59},     {"hour", 3600, 23},
                                      {"day", 86400, 6},        {"week", 86400 * 7, 6}, {"month", 86400 * 30, 11},
                                      {"year", 86400 * 365, -1}};
  long value = 0;
  const char* label = "year";
  for (const Chunk& chunk : kChunks) {
    value = std::lround(delta / chunk.divider);
    label = chunk.label;
    if (chunk.max >= 0 && value <= chunk.max) break;
  }
  return std::to_string(value) + " " + label + (value > 1 ? "s" : "") + " ago";
}

// The version number of a `v<N>` ref.
std::optional<long long> version_number(const std::string& ref) {
  if (ref.size() < 2 || ref[0] != 'v' || ref.size() > 19) return std::nullopt;
  if (ref.find_first_not_of("0123456789", 1) != std::string::npos) return std::nullopt;
  return std::stoll(ref.substr(1));
}

// The build variants a revision holds files of, whose names parse (kernels' _cached_variants).
std::vector<std::string> cached_variants(const client::CachedRevision& revision) {
  std::vector<std::string> variants;
  for (const client::CachedFile& file : revision.files) {
    if (file.path.rfind("build/", 0) != 0) continue;
    const std::size_t end = file.path.find('/', 6);
    if (end == std::string::npos) continue;  // a file directly in build/
    std::string name = file.path.substr(6, end - 6);
    if (!variants.empty() && variants.back() == name) continue;
    if (resolver::Variant::parse(name)) variants.push_back(std::move(name));
  }
  std::sort(variants.begin(), variants.end());
  variants.erase(std::unique(variants.begin(), variants.end()), variants.end());
  return variants;
}

// Columns padded as huggingface_hub's tabulate pads them (SIZE right-aligned).
void print_table(const std::vector<std::vector<std::string>>& rows) {
  const std::vector<std::string> headers{"ID", "SIZE", "LAST_ACCESSED", "LAST_MODIFIED", "VERSION", "VARIANTS"};
  std::vector<std::size_t> widths;
  for (const auto& header : headers) widths.push_back(header.size());
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(widths[c] - row[c].size(), ' ');
      line += (c ? " " : "") + (c == 1 ? pad + row[c] : row[c] + pad);
    }
    std::printf("%s\n", printable(line, Lines::kEscaped).c_str());  // variant names came from a Hub
  };
  print_row(headers);
  std::vector<std::string> rule;
  for (std::size_t w : widths) rule.emplace_back(w, '-');
  print_row(rule);
  for (const auto& row : rows) print_row(row);
}

int run_cache_ls(const CacheLsArguments& args) {
  auto failed = [&](const Error& error) { return fail("kernelhub cache ls", error, args.json); };
  std::filesystem::path root;
  if (args.cache_dir) {
    root = *args.cache_dir;
  } else {
    auto settings = client::Settings::from_env(process_environment());
    if (!settings) return failed(settings.error());
    root = settings->cache_dir(RepoType::kKernel);
  }
  std::error_code ec;
  if (auto canonical = std::filesystem::weakly_canonical(root, ec); !ec) root = canonical;

  client::CacheScan scan;
  auto scanned = client::scan_cache(root);
  if (scanned) {
    scan = std::move(*scanned);
  } else if (scanned.error().code != ErrorCode::kNotFound) {  // no cache yet: nothing cached
    return failed(scanned.error().with_context("cannot scan the kernel cache"));
  }

  nlohmann::json repos = nlohmann::json::array();
  std::vector<std::vector<std::string>> rows;
  for (const client::CachedRepo& repo : scan.repos) {
    struct Version {
      long long number;
      std::string ref;
      const client::CachedRevision* revision;
    };
    std::vector<Version> versions;
    for (const auto& revision : repo.revisions) {
      for (const auto& ref : revision.refs) {
        if (auto number = version_number(ref)) versions.push_back({*number, ref, &revision});
      }
    }
    if (versions.empty()) continue;
    std::sort(versions.begin(), versions.end(),
              [](const Version& a, const Version& b) { return std::tie(a.number, a.ref) < std::tie(b.number, b.ref); });
    nlohmann::json listed = nlohmann::json::array();
    for (const Version& version : versions) {
      const auto variants = cached_variants(*version.revision);
      listed.push_back({{"version", version.ref},
                        {"commit", version.revision->commit},
                        {"size_on_disk", version.revision->size_on_disk},
                        {"last_accessed", version.revision->last_accessed},
                        {"last_modified", version.revision->last_modified},
                        {"variants", variants}});
      rows.push_back({"kernel/" + repo.repo.to_string(), format_size(version.revision->size_on_disk),
                      format_timesince(version.revision->last_accessed),
                      format_timesince(version.revision->last_modified), version.ref,
                      variants.empty() ? "-" : variants.front()});
      for (std::size_t i = 1; i < variants.size(); ++i) rows.push_back({"", "", "", "", "", variants[i]});
    }
    repos.push_back({{"repo_id", repo.repo.to_string()},
                     {"path", repo.dir.string()},
                     {"size_on_disk", repo.size_on_disk},
                     {"last_accessed", repo.last_accessed},
                     {"last_modified", repo.last_modified},
                     {"versions", std::move(listed)}});
  }

  if (args.json) {
    std::printf("%s\n", nlohmann::json{{"cache_dir", root.string()}, {"repos", std::move(repos)}}.dump(2).c_str());
  } else if (rows.empty()) {
    std::printf("No cached kernel versions found in %s.\n", root.c_str());
  } else {
    print_table(rows);
  }
  if (!scan.warnings.empty()) {
    if (args.show_warnings) {
      for (std::string warning : scan.warnings) {
        while (!warning.empty() && warning.back() == '.') warning.pop_back();
        std::fprintf(stderr, "Warning: %s. Repo ignored.\n", printable(warning).c_str());
      }
    } else {
      std::fprintf(stderr, "Warning: Found %zu cache inconsistencies. Re-run with `--show-warnings` to display them.\n",
                   scan.warnings.size());
    }
  }
  return kExitOk;
}

CommandRun define_cache_ls(CLI::App& app) {
  auto args = std::make_shared<CacheLsArguments>();
  app.description(
      "List the kernel versions in the Hugging Face cache (repos with a vN ref) and the build\n"
      "variants each holds, with their size on disk and when they were last accessed and changed,\n"
      "as `kernels cache ls` lists them. Repo folders that are not whole are left out with a warning.");
  app.add_option("--cache-dir", args->cache_dir,
                 "the cache to inspect (default: KERNELS_CACHE, else HF_HUB_CACHE, else $HF_HOME/hub)")
      ->option_text("DIR");
  app.add_flag("--json", args->json,
               "print one JSON object: {\"cache_dir\", \"repos\": [{\"repo_id\", \"path\", \"size_on_disk\", "
               "\"last_accessed\", \"last_modified\", \"versions\": [{\"version\", \"commit\", \"size_on_disk\", "
               "\"last_accessed\", \"last_modified\", \"variants\"}]}]} (times in seconds since the epoch)");
  app.add_flag("--show-warnings", args->show_warnings, "say why each repo folder left out was left out");
  app.add_flag("--no-truncate", args->no_truncate, "accepted as kernels accepts it; values are never truncated");
  return [args] { return run_cache_ls(*args); };
}

}  // namespace

KERNELHUB_SUBCOMMAND("cache", "ls", "list the cached kernel versions and their build variants", &define_cache_ls);

}  // namespace kernelhub::cli
