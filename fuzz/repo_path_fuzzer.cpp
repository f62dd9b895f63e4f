// libFuzzer target: the Hub's naming rules, which client and server share (base/hub_names.hpp).
// Beyond "no crash": an accepted path or revision can never leave the repository — relative, no
// `.`/`..`/empty segment, no backslash or control character, within the length limits — an
// accepted ref name has no `..` and is a revision, and an accepted repo id has at most two parts
// of 1 to 96 characters.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_require.hpp"
#include "kernelhub/base/internal/hub_names.hpp"

using kernelhub::fuzz::require;

namespace {

void require_contained(std::string_view path) {
  using namespace kernelhub::hub_names;
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
  using namespace kernelhub::hub_names;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (validate_repo_path(text)) require_contained(text);
  if (auto folder = normalize_folder_path(text)) {
    require_contained(*folder);
    auto again = normalize_folder_path(*folder);
    require(again.has_value() && *again == *folder);
  }
  if (validate_revision(text)) require_contained(text);
  if (validate_ref_name(text)) {
    require(!text.empty() && text.size() <= kMaxRefNameBytes && text.find("..") == std::string_view::npos);
    require(text.front() != '-');
    require(validate_revision(text).has_value());
  }
  if (auto id = split_repo_id(text)) {
    for (std::string_view part : {id->ns, id->name}) {
      require(part.size() <= kMaxRepoIdPartChars && part.find('/') == std::string_view::npos);
    }
    require(!id->name.empty() &&
            (id->ns.empty() ? id->name.size() : id->ns.size() + 1 + id->name.size()) == text.size());
  }
  return 0;
}
