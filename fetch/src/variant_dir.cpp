#include "variant_dir.hpp"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

namespace kernelhub {

namespace {

std::optional<std::string> namespace_from_ops_py(const std::filesystem::path& dir) {
  std::ifstream in(dir / "_ops.py");
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  static const std::regex ops_re(R"(torch\.ops\.([A-Za-z_][A-Za-z0-9_]*))");
  std::smatch m;
  const std::string s = text.str();
  if (std::regex_search(s, m, ops_re)) return m[1].str();
  return std::nullopt;
}

}  // namespace

Result<Metadata> read_variant_metadata(const std::filesystem::path& dir) {
  auto metadata = Metadata::read(dir);
  if (metadata || metadata.error().code != ErrorCode::kNotFound) return metadata;
  auto ns = namespace_from_ops_py(dir);
  if (!ns) {
    return unexpected(ErrorCode::kNotFound, "variant directory `" + dir.string() +
                                                "` has neither metadata.json nor _ops.py, so its op namespace is "
                                                "unknown");
  }
  Metadata fallback;
  fallback.id = *ns;
  fallback.name = dir.filename().string();
  return fallback;
}

Result<std::filesystem::path> find_op_library(const std::filesystem::path& dir, const std::string& ns) {
  for (const char* suffix : {".abi3.so", ".so"}) {
    const auto named = dir / (ns + suffix);
    if (std::filesystem::is_regular_file(named)) return named;
  }
  std::vector<std::filesystem::path> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".so") found.push_back(entry.path());
    if (entry.is_directory()) {
      for (const auto& inner : std::filesystem::directory_iterator(entry.path(), ec)) {
        if (inner.is_regular_file() && inner.path().extension() == ".so") found.push_back(inner.path());
      }
    }
  }
  if (found.size() == 1) return found.front();
  if (found.empty()) {
    return unexpected(ErrorCode::kNotFound, "variant directory `" + dir.string() + "` has no op library (`" + ns +
                                                ".abi3.so` or another `.so`)");
  }
  return unexpected(ErrorCode::kCorruptFile, "variant directory `" + dir.string() +
                                                 "` has several `.so` files and none is named `" + ns + ".abi3.so`");
}

std::vector<std::string> subdirectories(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_directory(ec)) out.push_back(entry.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kernelhub
