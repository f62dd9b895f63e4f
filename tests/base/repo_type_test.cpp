#include "kernelhub/base/internal/repo_type.hpp"

#include <catch2/catch.hpp>

namespace kernelhub {
namespace {

TEST_CASE("repo types: every spelling the Hub uses, and back") {
  CHECK(url_prefix(RepoType::kKernel) == "kernels/");
  CHECK(url_prefix(RepoType::kModel) == "");
  CHECK(url_prefix(RepoType::kDataset) == "datasets/");
  CHECK(api_segment(RepoType::kSpace) == "spaces");
  CHECK(to_string(RepoType::kKernel) == "kernel");
  CHECK(repo_type_from_api_segment("kernels") == RepoType::kKernel);
  CHECK_FALSE(repo_type_from_api_segment("kernel"));
  CHECK(repo_type_from_name("") == RepoType::kModel);
  CHECK_FALSE(repo_type_from_name("bucket"));
  CHECK_FALSE(repo_type_from_name("kernels"));
  for (RepoType type : kAllRepoTypes) {
    CHECK(repo_type_from_name(to_string(type)) == type);
    CHECK(repo_type_from_api_segment(api_segment(type)) == type);
  }
}

}  // namespace
}  // namespace kernelhub
