// RepoType: the kind of a Hub repository, and every way the Hub spells it. Client, server and
// tools all map through these functions, so a new spelling is added in one place.
//
//   to_string(kKernel)    "kernel"    singular: /api/repos/create's `type`, messages
//   api_segment(kKernel)  "kernels"   /api/kernels/..., and the cache and store folder prefix
//                                     (kernels--org--name)
//   url_prefix(kKernel)   "kernels/"  file and web routes; "" for models
//
// Thread safety: pure functions over constants.
#pragma once

#include <optional>
#include <string_view>

namespace kernelhub {

enum class RepoType { kModel, kDataset, kSpace, kKernel };

inline constexpr RepoType kAllRepoTypes[] = {RepoType::kModel, RepoType::kDataset, RepoType::kSpace, RepoType::kKernel};

// "model", "dataset", "space", "kernel".
std::string_view to_string(RepoType type);
// "models", "datasets", "spaces", "kernels".
std::string_view api_segment(RepoType type);
// "", "datasets/", "spaces/", "kernels/".
std::string_view url_prefix(RepoType type);

// From the singular name; an empty name means model (as /api/repos/create reads it).
std::optional<RepoType> repo_type_from_name(std::string_view name);
// From the plural API segment ("kernels").
std::optional<RepoType> repo_type_from_api_segment(std::string_view segment);

}  // namespace kernelhub
