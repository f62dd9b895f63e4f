#include "test_support.hpp"

#include <fstream>
#include <random>
#include <sstream>

#include "kernelhub/base/internal/git_blob_sha1.hpp"
#include "kernelhub/base/internal/sha256.hpp"

namespace kernelhub::client::testing {

namespace fs = std::filesystem;

Settings test_settings(const fs::path& cache, const std::string& endpoint) {
  Settings s;
  s.hf_home = cache.parent_path();
  s.hub_cache = cache;
  s.endpoint = endpoint;
  s.token = Token("hf_testtoken0123456789");
  s.connect_timeout = std::chrono::milliseconds(1000);
  s.api_timeout = std::chrono::milliseconds(1000);
  s.read_timeout = std::chrono::milliseconds(1000);
  s.backoff_base = std::chrono::milliseconds(10);
  s.backoff_max = std::chrono::milliseconds(40);
  s.fsync = false;
  return s;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

namespace {

// blobs/<etag>.incomplete: a partial download kept to be continued (blob_download.hpp).
bool is_kept_partial(const std::string& name) {
  const std::string stem = name.substr(0, name.find('.'));
  return name == stem + ".incomplete" && (stem.size() == 64 || stem.size() == 40);
}

}  // namespace

std::vector<fs::path> partial_files(const fs::path& cache) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(cache, ec), end; !ec && it != end; it.increment(ec)) {
    if (is_kept_partial(it->path().filename().string())) out.push_back(it->path());
  }
  return out;
}

std::string cache_problems(const fs::path& cache) {
  std::string problems;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(cache, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (is_kept_partial(name)) continue;
    if (name.ends_with(".incomplete") || name.ends_with(".tmp")) problems += "temp file " + it->path().string() + "\n";
    if (it->path().parent_path().filename() == "blobs" && it->is_regular_file()) {
      const std::string content = read_file(it->path());
      const std::string digest = name.size() == 64 ? to_hex(sha256(content)) : git_blob_sha1(content);
      if (digest != name) problems += "blob " + it->path().string() + " hashes to " + digest + "\n";
    }
  }
  return problems;
}

std::string random_bytes(std::size_t size, unsigned seed) {
  std::mt19937 engine(seed);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(engine() & 0xff);
  return out;
}

}  // namespace kernelhub::client::testing
