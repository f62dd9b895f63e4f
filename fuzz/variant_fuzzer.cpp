// libFuzzer target: the text grammars a Hub listing or metadata.json can feed us — variant
// names (resolver::Variant), backend tokens, versions, compute capabilities, CUDA targets and
// metadata.json `backend.archs` entries. Beyond "no crash", it checks that what parse() reads
// prints back to a string that parses to the same value, and, for variant names and CUDA
// targets, to the same text (a name with a number that would not print back, such as
// `torch2010-…`, is refused: resolver/variant.hpp).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_require.hpp"
#include "kernelhub/resolver/cuda_target.hpp"
#include "kernelhub/resolver/environment.hpp"
#include "kernelhub/resolver/variant.hpp"

using kernelhub::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kernelhub::resolver;
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  if (auto v = Variant::parse(text)) {
    const std::string printed = v->to_string();
    require(printed == text);
    auto again = Variant::parse(printed);
    require(again.has_value() && *again == *v);
  }
  if (auto b = Backend::parse_token(text)) {
    auto again = Backend::parse_token(b->to_token());
    require(again.has_value() && *again == *b);
  }
  if (auto b = Backend::parse_environment(text)) {
    auto again = Backend::parse_environment(b->to_environment());
    require(again.has_value() && *again == *b);
  }
  (void)Version::parse(text);
  (void)ComputeCapability::parse(text);
  if (auto t = CudaTarget::parse(text)) require(t->to_string() == text);
  if (auto archs = parse_cuda_arch(text)) require(!archs->empty() && archs->size() <= 2);
  return 0;
}
