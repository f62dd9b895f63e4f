// libFuzzer target: the server's checks on client-sent names (server/repo_path.hpp). Beyond "no
// crash": an accepted path can never leave the repository — relative, no `.`/`..`/empty segment,
// no backslash or control character, within the length limits — and an accepted ref name has no `..`.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_require.hpp"
#include "kernelhub/server/repo_path.hpp"

using kernelhub::fuzz::require;

namespace {

void require_contained(std::string_view path) {
  using namespace kernelhub::server;
  require(!path.empty() && path.size() <= kMaxRepoPathBytes && path.front() != '/');
  for (unsigned char c : path) require(c >= 0x20 && c != 0x7f && c != '\\');
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = path.find('/', start);
    const std::string_view segment =
        path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    require(!segment.empty() && segment != "." && segment != ".." && segment.size() <= kMaxPathSegmentBytes);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kernelhub::server;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (validate_repo_path(text)) require_contained(text);
  if (auto folder = normalize_folder_path(text)) {
    require_contained(*folder);
    auto again = normalize_folder_path(*folder);
    require(again.has_value() && *again == *folder);
  }
  if (validate_ref_name(text)) {
    require(!text.empty() && text.size() <= kMaxRefNameBytes && text.find("..") == std::string_view::npos);
    require(text.front() != '-');
  }
  return 0;
}
