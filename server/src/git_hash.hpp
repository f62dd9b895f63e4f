// Git object ids: the ETag of a regular Hub file is its git blob sha1,
// sha1("blob " + decimal size + "\0" + content).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"

namespace kernelhub::server {

class Sha1 {
 public:
  Sha1();
  ~Sha1();
  Sha1(Sha1&&) noexcept;
  void update(const void* data, std::size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::string finish_hex();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

std::string sha1_hex(std::string_view bytes);
std::string git_blob_sha1(std::string_view content);
// Streams the file once. Errors: kNotFound, kIo.
Result<std::string> git_blob_sha1_file(const std::filesystem::path& path, std::uint64_t size);

// HMAC-SHA256(key, message) as hex, truncated to 32 characters (128 bits): signs storage URLs.
std::string hmac_hex(std::string_view key, std::string_view message);

bool is_hex(std::string_view s);
bool is_sha256_hex(std::string_view s);  // 64 lower-case hex

}  // namespace kernelhub::server
