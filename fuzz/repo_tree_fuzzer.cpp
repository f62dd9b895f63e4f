// libFuzzer target: RepoTree::from_cache_json (client/repo_tree.hpp), the trees/<commit>.json a
// cache may hold (written by us, by huggingface_hub, or by anyone who can write the cache).
// Beyond "no crash": an accepted tree is sorted and survives to_cache_json and back unchanged.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_require.hpp"
#include "kernelhub/client/internal/repo_tree.hpp"

using kernelhub::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using kernelhub::client::RepoTree;
  constexpr std::string_view kCommit = "0123456789abcdef0123456789abcdef01234567";
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto tree = RepoTree::from_cache_json(kCommit, text);
  if (!tree) {
    require(!tree.error().message.empty());
    return 0;
  }
  for (std::size_t i = 1; i < tree->files.size(); ++i) require(tree->files[i - 1].path <= tree->files[i].path);
  auto again = RepoTree::from_cache_json(kCommit, tree->to_cache_json());
  require(again.has_value() && again->files.size() == tree->files.size());
  for (std::size_t i = 0; i < tree->files.size(); ++i) {
    require(again->files[i].path == tree->files[i].path && again->files[i].etag() == tree->files[i].etag() &&
            again->files[i].size == tree->files[i].size);
  }
  (void)tree->subfolders("build");
  (void)tree->under("build/");
  return 0;
}
