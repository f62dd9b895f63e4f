// Python environments on disk for the torch lookup's tests: torch packages, virtual environments
// and installations laid out as pip, venv and CPython lay them out.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "support/temp_dir.hpp"

namespace kernelhub::resolver::testing {

using kernelhub::testing::TempDir;

void write_file(const std::filesystem::path& path, const std::string& text, bool executable = false);

// torch/version.py as torch's build generates it: `cuda`, `hip` None unless given.
std::string version_py(const std::string& version, const std::optional<std::string>& cuda = std::nullopt,
                       const std::optional<std::string>& hip = std::nullopt);

// <site_packages>/torch/version.py with `version_py_text`, and TorchConfig.cmake naming
// `cmake_abi` when given (as torch < 2.8 wheels do).
void write_torch(const std::filesystem::path& site_packages, const std::string& version_py_text,
                 std::optional<bool> cmake_abi = std::nullopt);

// <prefix>/pyvenv.cfg and bin/python3, a link to `base_interpreter`, as `python -m venv` makes them.
void make_venv(const std::filesystem::path& prefix, const std::filesystem::path& base_interpreter,
               bool system_site_packages = false);

}  // namespace kernelhub::resolver::testing
