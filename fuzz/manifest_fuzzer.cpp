// libFuzzer target: signing::Manifest::parse (signing/manifest.hpp), the bytes a variant
// signature covers. Its contract is one spelling per manifest: whatever parse() accepts, to_bytes()
// writes back byte for byte, and every file path it names is a safe relative path.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_require.hpp"
#include "kernelhub/signing/internal/manifest.hpp"

using kernelhub::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kernelhub::signing;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto manifest = Manifest::parse(bytes);
  if (!manifest) return 0;
  require(manifest->validate().has_value());
  require(manifest->to_bytes() == bytes);
  for (const auto& file : manifest->files) require(is_safe_manifest_path(file.path));
  return 0;
}
