// libFuzzer target: Metadata::parse (kernelhub/fetch/metadata.hpp), a variant's metadata.json as the
// Hub serves it. Beyond "no crash": what it accepts has a kernel name, an identifier `id` and a
// version.
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_require.hpp"
#include "kernelhub/fetch/metadata.hpp"

using kernelhub::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto metadata = kernelhub::Metadata::parse(text);
  if (!metadata) {
    require(!metadata.error().message.empty());
    return 0;
  }
  require(metadata->name.size() >= 2 && metadata->version.has_value());
  for (char c : metadata->name) require((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
  require(!metadata->id.empty() && !std::isdigit(static_cast<unsigned char>(metadata->id[0])));
  for (char c : metadata->id) require(std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  return 0;
}
