// libFuzzer target: the bytes of a `.nv_fatbin` section (binary_format::Fatbin::parse), and what GPU
// fit (resolver::fit_gpus) makes of whatever entries come out of them.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_require.hpp"
#include "kernelhub/binary_format/internal/fatbin.hpp"
#include "kernelhub/resolver/gpu_fit.hpp"
#include "kernelhub/resolver/reason.hpp"

using kernelhub::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kernelhub;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto entries = binary_format::Fatbin::parse(bytes);
  if (!entries) {
    require(entries.error().code == ErrorCode::kCorruptFile);
    return 0;
  }
  // Each entry has at least a 64-byte header in the input, and its sizes fit in it.
  require(entries->size() * 64 <= size);
  for (const auto& e : *entries) {
    require(e.target.sm() >= 10 && e.target.sm() <= 999);
    require(e.size <= size && e.uncompressed_size >= (e.compressed ? 1 : e.size));
    require(resolver::CudaTarget::parse(e.target.to_string()).has_value());
  }
  const auto fit = resolver::fit_gpus({binary_format::targets_of(*entries),
                                       {{8, 0}, {9, 0}, {12, 0}, {8, 7}},
                                       resolver::Version{12, 8},
                                       resolver::Version{12, 8}});
  require(!resolver::to_string(fit).empty());
  return 0;
}
