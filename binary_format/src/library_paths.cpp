#include "library_paths.hpp"

namespace kernelhub::binary_format {

std::vector<std::string> split_path_list(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find(':', start);
    std::string part(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (!part.empty()) out.push_back(std::move(part));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

std::string expand_origin(std::string dir, const std::string& origin) {
  for (std::string_view token : {"${ORIGIN}", "$ORIGIN"}) {
    for (auto pos = dir.find(token); pos != std::string::npos; pos = dir.find(token, pos + origin.size())) {
      dir.replace(pos, token.size(), origin);
    }
  }
  return dir;
}

}  // namespace kernelhub::binary_format
