#include "kernelhub/resolver/internal/installed_torch.hpp"

#include <catch2/catch.hpp>

#include "fake_python.hpp"

namespace kernelhub::resolver {
namespace {

using testing::TempDir;
using testing::version_py;
using testing::write_torch;

TEST_CASE("a CUDA torch wheel is read from its version.py") {
  TempDir site;
  write_torch(site.path(), version_py("2.15.0+cu132", "13.2"));
  const InstalledTorch torch = read_installed_torch(site.path() / "torch").value();
  CHECK(torch.dir == site.path() / "torch");
  CHECK(torch.runtime.version == std::optional<Version>(Version{2, 15}));
  CHECK(torch.runtime.backend == Backend{BackendKind::kCuda, Version{13, 2}});
  CHECK(torch.runtime.cxx11_abi == std::optional<bool>(true));  // no ABI in TorchConfig.cmake: 2.15's wheels'
}

TEST_CASE("a CPU torch has no cuda; an older wheel's TorchConfig.cmake names its C++ ABI") {
  TempDir site;
  write_torch(site.path(), version_py("2.6.0+cpu"), /*cmake_abi=*/true);
  const InstalledTorch torch = read_installed_torch(site.path() / "torch").value();
  CHECK(torch.runtime.version == std::optional<Version>(Version{2, 6}));
  CHECK(torch.runtime.backend == Backend{});
  CHECK(torch.runtime.cxx11_abi == std::optional<bool>(true));  // the file wins over 2.6's wheels (cxx98)

  TempDir old;
  write_torch(old.path(), version_py("2.5.1", "12.4"));  // and without it, the wheels' ABI
  CHECK(read_installed_torch(old.path() / "torch").value().runtime.cxx11_abi == std::optional<bool>(false));
}

TEST_CASE("version.py of older torch, without annotations, and a ROCm torch") {
  const auto info =
      parse_version_py("__version__ = '2.4.0+rocm6.1'\ndebug = False\ncuda = None\nhip = \"6.1.40091-a8dbc0c19\"\n");
  REQUIRE(info.has_value());
  CHECK(info->version == "2.4.0+rocm6.1");
  CHECK_FALSE(info->cuda.has_value());
  CHECK(info->hip == std::optional<std::string>("6.1.40091-a8dbc0c19"));
  CHECK(info->runtime().value().backend == Backend{BackendKind::kRocm, Version{6, 1}});
  // torch >= 2.10 also writes `rocm`, the ROCm release kernels prefers.
  const auto named = parse_version_py(
      "__version__ = '2.10.0+rocm7.1'\ncuda: Optional[str] = None\n"
      "hip: Optional[str] = '7.0.51831-a3e329ad8'\nrocm: Optional[str] = '7.1.0'\n");
  CHECK(named.value().rocm == std::optional<std::string>("7.1.0"));
  CHECK(named->runtime().value().backend == Backend{BackendKind::kRocm, Version{7, 1}});
}

TEST_CASE("a missing torch is kNotFound, a malformed version.py kCorruptFile naming the file") {
  TempDir site;
  CHECK(read_installed_torch(site.path() / "torch").error().code == ErrorCode::kNotFound);

  testing::write_file(site.path() / "torch" / "version.py", "# truncated by a failed install\n");
  const auto truncated = read_installed_torch(site.path() / "torch");
  REQUIRE_FALSE(truncated.has_value());
  CHECK(truncated.error().code == ErrorCode::kCorruptFile);
  CHECK_THAT(truncated.error().message, Catch::Contains((site.path() / "torch" / "version.py").string()) &&
                                            Catch::Contains("no `__version__ = '...'` line") &&
                                            Catch::Contains("KERNELHUB_TORCH"));

  testing::write_file(site.path() / "torch" / "version.py", version_py("main", "12.8"));
  const auto unparsable = read_installed_torch(site.path() / "torch");
  REQUIRE_FALSE(unparsable.has_value());
  CHECK(unparsable.error().code == ErrorCode::kCorruptFile);
  CHECK_THAT(unparsable.error().message, Catch::Contains("torch.__version__: `main`"));
}

}  // namespace
}  // namespace kernelhub::resolver
