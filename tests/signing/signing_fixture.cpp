#include "signing_fixture.hpp"

#include <fstream>
#include <sstream>

#include "kernelhub/signing/internal/sign.hpp"

namespace kernelhub::signing::testing {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_file(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

PrivateKey publisher_key() {
  return *PrivateKey::parse("nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=");  // RFC 8032 §7.1 test 1
}

PrivateKey other_key() {
  return *PrivateKey::parse("TM0Imyj/ltqdtsNG7BFOD1uKMZ81q6Yk2oz27U+4pvs=");
}

SignedVariant::SignedVariant(const std::string& variant, int version) : dir(temp.path() / variant) {
  write_file(dir / "metadata.json", R"({"name": "reference-kernels", "id": "_reference_kernels_cpu_abc"})");
  write_file(dir / "__init__.py", "from ._ops import ops\n");
  write_file(dir / "_ops.py", "import torch\nops = torch.ops._reference_kernels_cpu_abc\n");
  std::string library(70000, '\0');
  for (std::size_t i = 0; i < library.size(); ++i) library[i] = static_cast<char>((i * 131) & 0xff);
  write_file(dir / "_reference_kernels_cpu_abc.abi3.so", library);
  write_file(dir / "layers" / "__init__.py", "class RMSNorm: pass\n");
  VariantIdentity identity{kRepo, version, variant, "0123456789abcdef0123456789abcdef01234567"};
  auto signed_manifest = sign_variant(dir, identity, publisher_key(), {.serial = 42});
  if (!signed_manifest) throw std::runtime_error(signed_manifest.error().message);
}

ExpectedVariant SignedVariant::expected() const {
  return ExpectedVariant{kRepo, 2, dir.filename().string(), {}};
}

VerifyPolicy SignedVariant::trusting_publisher() {
  VerifyPolicy policy;
  (void)policy.trusted_keys.add("acme", publisher_key().public_key());
  return policy;
}

}  // namespace kernelhub::signing::testing
