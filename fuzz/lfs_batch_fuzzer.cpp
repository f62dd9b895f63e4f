// libFuzzer target: the server's git-lfs request parsers (server/src/upload_requests.hpp) — the
// batch call, verify, multipart completion and preupload; the first byte picks one (and the
// number of parts a completion must have), the rest is the body. Beyond "no crash": an object
// marked valid names a sha256, a completion gives exactly the expected etags as 32 hex digits, and
// every preupload path passes the server's path check.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "digest_text.hpp"
#include "fuzz_require.hpp"
#include "kernelhub/base/internal/hub_names.hpp"
#include "upload_requests.hpp"

using kernelhub::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kernelhub::server;
  if (size == 0) return 0;
  const std::uint8_t selector = data[0];
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (selector & 3) {
    case 0:
      if (auto batch = parse_lfs_batch(body)) {
        for (const auto& object : batch->objects) {
          if (object.valid) require(is_sha256_hex(object.oid));
        }
      }
      break;
    case 1:
      if (auto ref = parse_lfs_verify(body)) require(is_sha256_hex(ref->oid));
      break;
    case 2: {
      const std::uint64_t expected = selector >> 2;
      if (auto etags = parse_multipart_completion(body, expected)) {
        require(etags->size() == expected);
        for (const auto& etag : *etags) require(etag.size() == 32 && is_hex(etag));
      }
      break;
    }
    default:
      if (auto request = parse_preupload(body)) {
        for (const auto& file : request->files)
          require(kernelhub::hub_names::validate_repo_path(file.path).has_value());
      }
      break;
  }
  return 0;
}
