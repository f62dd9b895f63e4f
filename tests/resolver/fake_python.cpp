#include "fake_python.hpp"

#include <fstream>

namespace kernelhub::resolver::testing {

namespace fs = std::filesystem;

void write_file(const fs::path& path, const std::string& text, bool executable) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
  if (executable) fs::permissions(path, fs::perms::owner_exec, fs::perm_options::add);
}

std::string version_py(const std::string& version, const std::optional<std::string>& cuda,
                       const std::optional<std::string>& hip) {
  auto value = [](const std::optional<std::string>& v) { return v ? "'" + *v + "'" : std::string("None"); };
  return "from typing import Optional\n\n"
         "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'rocm', 'xpu']\n"
         "__version__ = '" +
         version +
         "'\n"
         "debug = False\n"
         "cuda: Optional[str] = " +
         value(cuda) +
         "\n"
         "git_version = 'd0f2af8b66b20da4baa50644c0cd3f887a2eae2e'\n"
         "hip: Optional[str] = " +
         value(hip) +
         "\n"
         "rocm: Optional[str] = None\n"
         "xpu: Optional[str] = None\n";
}

void write_torch(const fs::path& site_packages, const std::string& version_py_text, std::optional<bool> cmake_abi) {
  write_file(site_packages / "torch" / "version.py", version_py_text);
  if (cmake_abi) {
    write_file(site_packages / "torch" / "share" / "cmake" / "Torch" / "TorchConfig.cmake",
               std::string("set(TORCH_CXX_FLAGS \"-D_GLIBCXX_USE_CXX11_ABI=") + (*cmake_abi ? "1" : "0") + "\")\n");
  }
}

void make_venv(const fs::path& prefix, const fs::path& base_interpreter, bool system_site_packages) {
  write_file(prefix / "pyvenv.cfg", "home = " + base_interpreter.parent_path().string() +
                                        "\ninclude-system-site-packages = " +
                                        (system_site_packages ? "true" : "false") + "\nversion = 3.11.7\n");
  fs::create_directories(prefix / "bin");
  fs::create_symlink(base_interpreter, prefix / "bin" / "python3");
  fs::create_directories(prefix / "lib" / "python3.11" / "site-packages");
}

}  // namespace kernelhub::resolver::testing
