// libFuzzer target: LockFile::parse (kernelhub/fetch/internal/lockfile.hpp), the reader of kernels.lock and
// kernelhub.lock. Beyond "no crash", what it accepts must write back (to_json, both formats) to
// text it accepts again with the same commits.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_require.hpp"
#include "kernelhub/fetch/internal/lockfile.hpp"

using kernelhub::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using kernelhub::LockFile;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto lock = LockFile::parse(text, "fuzz.lock");
  if (!lock) {
    require(!lock.error().message.empty());
    return 0;
  }
  for (auto format : {kernelhub::LockFormat::kKernels, kernelhub::LockFormat::kLegacy}) {
    auto again = LockFile::parse(lock->to_json(format), "again.lock");
    require(again.has_value() && again->locks.size() == lock->locks.size());
    for (std::size_t i = 0; i < lock->locks.size(); ++i) require(again->locks[i].commit == lock->locks[i].commit);
  }
  return 0;
}
