// Shared helpers for client tests: a temp cache, Settings pointed at a Hub (support/fake_hub.hpp), and a check that
// a cache holds no partial file and no blob whose content does not match its name.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kernelhub/client/internal/settings.hpp"
#include "support/temp_dir.hpp"

namespace kernelhub::client::testing {

using kernelhub::testing::TempDir;

// Fast retries, 1 s timeouts, no fsync, a token.
Settings test_settings(const std::filesystem::path& cache, const std::string& endpoint);

// Empty when clean; else what is wrong (temp files, blobs whose hash is not their name). A partial
// download kept to be continued (blobs/<etag>.incomplete) is not a problem: partial_files lists them.
std::string cache_problems(const std::filesystem::path& cache);
std::vector<std::filesystem::path> partial_files(const std::filesystem::path& cache);

std::string read_file(const std::filesystem::path& path);

// Deterministic pseudo-random bytes.
std::string random_bytes(std::size_t size, unsigned seed);

}  // namespace kernelhub::client::testing
