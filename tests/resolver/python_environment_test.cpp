#include "kernelhub/resolver/internal/python_environment.hpp"

#include <catch2/catch.hpp>

#include "fake_python.hpp"

namespace kernelhub::resolver {
namespace {

namespace fs = std::filesystem;
using testing::make_venv;
using testing::TempDir;
using testing::write_file;

using Dirs = std::vector<fs::path>;

// <root>/base: an installation (bin/python3 → python3.11, an ELF file), with site-packages for
// 3.11 and a stale 3.9 one.
fs::path make_installation(const fs::path& root) {
  const fs::path base = root / "base";
  write_file(base / "bin" / "python3.11",
             std::string("\x7f"
                         "ELF",
                         4),
             /*executable=*/true);
  fs::create_symlink("python3.11", base / "bin" / "python3");
  fs::create_directories(base / "lib" / "python3.11" / "site-packages");
  fs::create_directories(base / "lib" / "python3.9" / "site-packages");
  return base;
}

TEST_CASE("VIRTUAL_ENV is the environment, its site-packages the place to look") {
  TempDir temp;
  const fs::path base = make_installation(temp.path());
  make_venv(temp.path() / "venv", base / "bin" / "python3.11");
  const auto python =
      find_python_environment(map_environment({{"VIRTUAL_ENV", (temp.path() / "venv").string()}, {"PATH", ""}}))
          .value();
  CHECK(python.prefix == temp.path() / "venv");
  CHECK(python.found_by == "VIRTUAL_ENV");
  CHECK(python.package_dirs == Dirs{temp.path() / "venv" / "lib" / "python3.11" / "site-packages"});

  const auto gone = find_python_environment(map_environment({{"VIRTUAL_ENV", (temp.path() / "gone").string()}}));
  REQUIRE_FALSE(gone.has_value());
  CHECK(gone.error().code == ErrorCode::kNotFound);
  CHECK_THAT(gone.error().message, Catch::StartsWith("VIRTUAL_ENV=`" + (temp.path() / "gone").string() + "`"));
}

TEST_CASE("python3 on PATH in a virtual environment is that environment, not its base") {
  TempDir temp;
  const fs::path base = make_installation(temp.path());
  make_venv(temp.path() / "venv", base / "bin" / "python3.11", /*system_site_packages=*/true);
  const std::string path = (temp.path() / "empty").string() + "::" + (temp.path() / "venv" / "bin").string();
  const auto python = find_python_environment(map_environment({{"PATH", path}})).value();
  CHECK(python.prefix == temp.path() / "venv");
  CHECK(python.found_by == "python3 on PATH: " + (temp.path() / "venv" / "bin" / "python3").string());
  // include-system-site-packages = true: the base's packages after the environment's own.
  CHECK(python.package_dirs == Dirs{temp.path() / "venv" / "lib" / "python3.11" / "site-packages",
                                    base / "lib" / "python3.11" / "site-packages"});
}

TEST_CASE("python3 on PATH in an installation: its own version's site-packages, after the user site") {
  TempDir temp;
  const fs::path base = make_installation(temp.path());
  const fs::path user_site = temp.path() / "home" / ".local" / "lib" / "python3.11" / "site-packages";
  fs::create_directories(user_site);
  const std::string home = (temp.path() / "home").string();
  const auto python =
      find_python_environment(map_environment({{"PATH", (base / "bin").string()}, {"HOME", home}})).value();
  CHECK(python.prefix == base);
  CHECK(python.package_dirs == Dirs{user_site, base / "lib" / "python3.11" / "site-packages"});

  const auto no_user_site = find_python_environment(
      map_environment({{"PATH", (base / "bin").string()}, {"HOME", home}, {"PYTHONNOUSERSITE", "1"}}));
  CHECK(no_user_site.value().package_dirs == Dirs{base / "lib" / "python3.11" / "site-packages"});
}

TEST_CASE("a python3 script on PATH (a pyenv shim) is asked for its prefix") {
  TempDir temp;
  const fs::path base = make_installation(temp.path());
  write_file(temp.path() / "shims" / "python3", "#!/bin/sh\necho '" + base.string() + "'\n", /*executable=*/true);
  const auto python = find_python_environment(map_environment({{"PATH", (temp.path() / "shims").string()}})).value();
  CHECK(python.prefix == base);
  // The interpreter's version is not known from a shim: every lib/python3.X, newest first.
  CHECK(python.package_dirs ==
        Dirs{base / "lib" / "python3.11" / "site-packages", base / "lib" / "python3.9" / "site-packages"});

  write_file(temp.path() / "broken" / "python3", "#!/bin/sh\necho 'pyenv: python3: command not found' >&2\nexit 127\n",
             /*executable=*/true);
  const auto broken = find_python_environment(map_environment({{"PATH", (temp.path() / "broken").string()}}));
  REQUIRE_FALSE(broken.has_value());
  CHECK(broken.error().code == ErrorCode::kIo);
  CHECK_THAT(broken.error().message, Catch::Contains("did not print a Python prefix"));
}

TEST_CASE("no VIRTUAL_ENV and no python3 on PATH is kNotFound naming the PATH searched") {
  TempDir temp;
  write_file(temp.path() / "bin" / "python3", "not executable");
  const std::string path = (temp.path() / "bin").string() + ":/nonexistent";
  const auto python = find_python_environment(map_environment({{"PATH", path}}));
  REQUIRE_FALSE(python.has_value());
  CHECK(python.error().code == ErrorCode::kNotFound);
  CHECK(python.error().message == "VIRTUAL_ENV is not set and there is no python3 on PATH (`" + path + "`)");
}

}  // namespace
}  // namespace kernelhub::resolver
