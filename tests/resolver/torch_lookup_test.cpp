#include "kernelhub/resolver/internal/torch_lookup.hpp"

#include <catch2/catch.hpp>

#include "fake_python.hpp"

namespace kernelhub::resolver {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// A virtual environment at <temp>/venv (on an interpreter that need not exist).
fs::path make_venv(const TempDir& temp) {
  testing::make_venv(temp.path() / "venv", temp.path() / "base" / "bin" / "python3.11");
  return temp.path() / "venv";
}

TEST_CASE("the Python environment's torch, read from its files") {
  TempDir temp;
  const fs::path venv = make_venv(temp);
  const fs::path site = venv / "lib" / "python3.11" / "site-packages";
  testing::write_torch(site, testing::version_py("2.15.0+cu132", "13.2"));
  const auto found = find_torch(map_environment({{"VIRTUAL_ENV", venv.string()}})).value();
  CHECK(found.runtime.version == std::optional<Version>(Version{2, 15}));
  CHECK(found.runtime.backend == Backend{BackendKind::kCuda, Version{13, 2}});
  CHECK(found.source == (site / "torch").string() + " (VIRTUAL_ENV)");
  // The Python that environment runs: what the kernels package there would select for.
  REQUIRE(found.python.has_value());
  CHECK(*found.python == PythonRuntime{{3, 11}, false, false, std::nullopt});
}

TEST_CASE("with the torch comes its environment's Python: free-threaded, MLX and tvm_ffi from its files") {
  TempDir temp;
  const fs::path venv = temp.path() / "venv";
  // A free-threaded venv: pyvenv.cfg says 3.13.1, its folder is lib/python3.13t.
  testing::write_file(venv / "pyvenv.cfg", "home = /nonexistent/bin\nversion = 3.13.1\n");
  const fs::path site = venv / "lib" / "python3.13t" / "site-packages";
  testing::write_torch(site, testing::version_py("2.15.0+cu132", "13.2"));
  fs::create_directories(site / "mlx" / "core");
  testing::write_file(site / "tvm_ffi" / "_version.py",
                      "__all__ = [\n    \"__version__\",\n]\n__version__: str\n"
                      "__version__ = version = '0.1.15.post2'\n__version_tuple__ = version_tuple = (0, 1, 15)\n");
  const auto found = find_torch(map_environment({{"VIRTUAL_ENV", venv.string()}})).value();
  REQUIRE(found.python.has_value());
  CHECK(*found.python == PythonRuntime{{3, 13}, true, true, Version{0, 1}});

  // tvm_ffi without its _version.py says 0.0.0.dev0, as the package itself does.
  fs::remove(site / "tvm_ffi" / "_version.py");
  CHECK(find_torch(map_environment({{"VIRTUAL_ENV", venv.string()}}))->python->tvm_ffi == Version{0, 0});
  // A torch named by hand comes without a Python.
  CHECK_FALSE(find_torch(map_environment({{"KERNELHUB_TORCH", "2.15"}}))->python.has_value());
}

TEST_CASE("KERNELHUB_TORCH comes before the Python environment") {
  TempDir temp;
  const fs::path venv = make_venv(temp);
  testing::write_torch(venv / "lib" / "python3.11" / "site-packages", testing::version_py("2.15.0+cu132", "13.2"));
  const auto found =
      find_torch(map_environment({{"VIRTUAL_ENV", venv.string()}, {"KERNELHUB_TORCH", "2.9+cpu"}})).value();
  CHECK(found.runtime.version == std::optional<Version>(Version{2, 9}));
  CHECK(found.runtime.backend == Backend{});
  CHECK(found.source == "KERNELHUB_TORCH");

  const auto bad = find_torch(map_environment({{"KERNELHUB_TORCH", "latest"}}));
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == ErrorCode::kInvalidArgument);
  CHECK_THAT(bad.error().message, Catch::StartsWith("KERNELHUB_TORCH=`latest` is not a torch version"));
}

TEST_CASE("no torch to be found says where it looked and what to set") {
  TempDir temp;
  const fs::path venv = make_venv(temp);
  const auto missing = find_torch(map_environment({{"VIRTUAL_ENV", venv.string()}}));
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ErrorCode::kNotFound);
  CHECK_THAT(missing.error().message,
             Catch::StartsWith("no torch to select variants for: KERNELHUB_TORCH is not set and the Python "
                               "environment `" +
                               venv.string() + "` (VIRTUAL_ENV) has no torch in `" +
                               (venv / "lib" / "python3.11" / "site-packages").string() + "`") &&
                 Catch::Contains("set KERNELHUB_TORCH to the torch the kernels are for"));

  const auto no_python = find_torch(map_environment({{"PATH", "/nonexistent"}}));
  REQUIRE_FALSE(no_python.has_value());
  CHECK(no_python.error().code == ErrorCode::kNotFound);
  CHECK_THAT(no_python.error().message,
             Catch::StartsWith("no torch to select variants for: KERNELHUB_TORCH is not set and VIRTUAL_ENV is not "
                               "set and there is no python3 on PATH (`/nonexistent`)") &&
                 Catch::Contains("set KERNELHUB_TORCH"));
}

TEST_CASE("a malformed torch is reported, not skipped") {
  TempDir temp;
  const fs::path venv = make_venv(temp);
  testing::write_file(venv / "lib" / "python3.11" / "site-packages" / "torch" / "version.py", "__version__ = \n");
  const auto found = find_torch(map_environment({{"VIRTUAL_ENV", venv.string()}}));
  REQUIRE_FALSE(found.has_value());
  CHECK(found.error().code == ErrorCode::kCorruptFile);
}

}  // namespace
}  // namespace kernelhub::resolver
