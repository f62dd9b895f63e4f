#include "kernelhub/base/internal/repo_type.hpp"

namespace kernelhub {

namespace {

struct Spellings {
  RepoType type;
  std::string_view name, api_segment, url_prefix;
};

// The one table of the Hub's spellings; kAllRepoTypes lists the types in this order.
constexpr Spellings kSpellings[] = {
    {RepoType::kModel, "model", "models", ""},
    {RepoType::kDataset, "dataset", "datasets", "datasets/"},
    {RepoType::kSpace, "space", "spaces", "spaces/"},
    {RepoType::kKernel, "kernel", "kernels", "kernels/"},
};

const Spellings& spellings(RepoType type) {
  for (const auto& row : kSpellings) {
    if (row.type == type) return row;
  }
  return kSpellings[0];
}

}  // namespace

std::string_view to_string(RepoType type) {
  return spellings(type).name;
}
std::string_view api_segment(RepoType type) {
  return spellings(type).api_segment;
}
std::string_view url_prefix(RepoType type) {
  return spellings(type).url_prefix;
}

std::optional<RepoType> repo_type_from_name(std::string_view name) {
  if (name.empty()) return RepoType::kModel;
  for (const auto& row : kSpellings) {
    if (row.name == name) return row.type;
  }
  return std::nullopt;
}

std::optional<RepoType> repo_type_from_api_segment(std::string_view segment) {
  for (const auto& row : kSpellings) {
    if (row.api_segment == segment) return row.type;
  }
  return std::nullopt;
}

}  // namespace kernelhub
