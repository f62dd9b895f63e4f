// libFuzzer target: the client's readers of the Hub's JSON answers (client/src/hub_answers.hpp) —
// revision, refs, a tree page, an organization overview; the first byte picks one, the rest is the
// body. Beyond "no crash, no exception": an accepted revision is 40 hex, every branch has a name
// and a 40-hex commit or none, and every tree entry has a safe path, a 40-hex blob id and, for
// LFS, a 64-hex sha256 — the names the cache builds file paths from.
#include <algorithm>
#include <cstdint>
#include <string_view>

#include "fuzz_require.hpp"
#include "hub_answers.hpp"
#include "kernelhub/base/internal/hub_names.hpp"
#include "kernelhub/base/internal/sha256.hpp"

using kernelhub::fuzz::require;

using kernelhub::is_lower_hex;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kernelhub::client;
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] & 3) {
    case 0:
      if (auto sha = parse_revision_answer(body)) require(is_lower_hex(*sha, 40));
      break;
    case 1:
      if (auto branches = parse_refs_answer(body)) {
        for (const auto& branch : *branches)
          require(!branch.name.empty() && (branch.commit.empty() || is_lower_hex(branch.commit, 40)));
      }
      break;
    case 2:
      if (auto files = parse_tree_page(body)) {
        for (const auto& entry : *files) {
          require(kernelhub::hub_names::validate_repo_path(entry.path) && is_lower_hex(entry.blob_id, 40));
          require(!entry.lfs_sha256 || is_lower_hex(*entry.lfs_sha256, 64));
          require(!entry.xet_hash || is_lower_hex(*entry.xet_hash, 64));
        }
      }
      break;
    default: (void)parse_overview_answer(body); break;
  }
  return 0;
}
