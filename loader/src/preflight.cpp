#include "kernelhub/loader/preflight.hpp"

#include "library_paths.hpp"
#include "loaded_libraries.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <gnu/libc-version.h>
#include <link.h>

#include <algorithm>
#include <optional>
#include <fstream>
#include <map>
#include <memory>
#include <set>

#include "kernelhub/loader/python_stub.hpp"
#include "kernelhub/loader/torch_libraries.hpp"

namespace kernelhub::loader {

namespace {

#if defined(__x86_64__)
constexpr std::uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr std::uint16_t kHostMachine = EM_AARCH64;
#else
constexpr std::uint16_t kHostMachine = EM_NONE;
#endif

// "GLIBCXX_3.4.30" → {3, 4, 30}, for ordering versions of one family.
std::vector<int> version_numbers(std::string_view version) {
  std::vector<int> out;
  const std::size_t us = version.find('_');
  if (us == std::string_view::npos) return out;
  int current = -1;
  for (char c : version.substr(us + 1)) {
    if (c >= '0' && c <= '9') {
      current = (current < 0 ? 0 : current * 10) + (c - '0');
    } else if (c == '.') {
      out.push_back(std::max(current, 0));
      current = -1;
    } else {
      break;
    }
  }
  if (current >= 0) out.push_back(current);
  return out;
}

std::string family(std::string_view version) {
  const std::size_t us = version.find('_');
  return us == std::string_view::npos ? std::string() : std::string(version.substr(0, us));
}

std::string demangle(const std::string& name) {
  int status = 0;
  struct FreeDeleter {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, FreeDeleter> out(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status));
  return status == 0 && out ? std::string(out.get()) : name;
}

// A C++ symbol of c10, ATen or torch: it ties the library to one torch version and C++ ABI.
bool is_torch_cxx_symbol(const std::string& name) {
  for (std::string_view prefix : {"_ZN3c10", "_ZNK3c10", "_ZN2at", "_ZNK2at", "_ZN5torch", "_ZNK5torch"}) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

// A function of torch's stable C ABI (the `aoti_torch_*` shim and `torch_*` functions), which
// stable-ABI kernels call instead of C++ symbols: one that is missing was added by a newer torch.
bool is_torch_c_symbol(const std::string& name) {
  return name.starts_with("aoti_torch_") || name.starts_with("torch_");
}

bool is_python_symbol(const std::string& name) {
  return name.starts_with("Py") || name.starts_with("_Py");
}

std::vector<std::string> ld_so_conf_dirs() {
  std::vector<std::string> out;
  std::error_code ec;
  const std::filesystem::path conf_d("/etc/ld.so.conf.d");
  if (!std::filesystem::is_directory(conf_d, ec)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(conf_d, ec)) {
    if (entry.path().extension() != ".conf") continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line[0] == '/') out.push_back(line);
    }
  }
  return out;
}

std::vector<std::string> search_dirs(const std::filesystem::path& path, const ElfFile& elf,
                                     const EnvironmentSource& env) {
  std::vector<std::string> dirs;
  const std::string origin = path.parent_path().string();
  for (const auto& entry : elf.runpath) {
    for (const std::string& dir : split_path_list(entry)) dirs.push_back(expand_origin(dir, origin));
  }
  if (auto ld = env("LD_LIBRARY_PATH")) {
    for (auto& dir : split_path_list(*ld)) dirs.push_back(dir);
  }
  for (auto& dir : ld_so_conf_dirs()) dirs.push_back(dir);
  for (const char* dir : {"/lib", "/usr/lib", "/lib64", "/usr/lib64", "/lib/x86_64-linux-gnu",
                          "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu"}) {
    dirs.emplace_back(dir);
  }
  return dirs;
}

// Versions defined by the libstdc++ this process runs with (read once: it never changes).
const std::set<std::string>& libstdcxx_versions(const std::map<std::string, std::string>& loaded) {
  static const std::set<std::string> versions = [&] {
    std::set<std::string> out;
    auto it = loaded.find("libstdc++.so.6");
    if (it == loaded.end()) return out;
    auto elf = ElfFile::read(it->second);
    if (elf) out.insert(elf->defined_versions.begin(), elf->defined_versions.end());
    return out;
  }();
  return versions;
}

}  // namespace

PreflightReport check_file(const std::filesystem::path& path, const ElfFile& elf, const EnvironmentSource& env,
                           const TorchLibraries& torch) {
  PreflightReport report;
  report.bind_now = elf.bind_now;
  if (!elf.is_64bit || !elf.little_endian || elf.machine != kHostMachine) {
    report.problems.push_back("it is built for " + std::string(machine_name(elf.machine)) +
                              (elf.is_64bit ? "" : " (32-bit)") + ", this process is " +
                              std::string(machine_name(kHostMachine)) + "; use the variant built for this cpu");
    return report;
  }
  if (elf.type != ET_DYN)
    report.problems.push_back("it is not a shared library (ELF type " + std::to_string(elf.type) + ")");

  const auto loaded = loaded_libraries();
  const auto dirs = search_dirs(path, elf, env);
  for (const std::string& lib : elf.needed) {
    if (loaded.contains(lib)) continue;
    // What torch provides comes from torch, as after `import torch`, whatever else is on the path.
    if (auto provided = torch.find(lib)) {
      report.torch_libraries.push_back(*provided);
      continue;
    }
    if (is_torch_library_name(lib)) {
      report.problems.push_back(
          "it needs `" + lib + "`, a torch library that the LibTorch in this process (" +
          (torch.lib_dir.empty() ? std::string("none is loaded") : torch.lib_dir.string()) +
          ") does not have: it was built against another build of torch (another version or backend); "
          "use the variant built for this torch");
      continue;
    }
    bool found = false;
    for (const auto& dir : dirs) {
      std::error_code ec;
      if (std::filesystem::exists(std::filesystem::path(dir) / lib, ec)) {
        found = true;
        break;
      }
    }
    if (!found) {
      report.problems.push_back("it needs `" + lib +
                                "`, which is neither loaded in this process, nor one of torch's libraries, nor on "
                                "the library search path; install the package that provides it or add its "
                                "directory to LD_LIBRARY_PATH");
    }
  }

  // Symbol versions: the newest of each family it needs.
  std::map<std::string, std::string> newest;
  for (const auto& sym : elf.symbols) {
    if (sym.defined || sym.version.empty()) continue;
    const std::string fam = family(sym.version);
    auto& current = newest[fam];
    if (current.empty() || version_numbers(current) < version_numbers(sym.version)) current = sym.version;
  }
  if (auto it = newest.find("GLIBC"); it != newest.end()) {
    const std::string system = std::string("GLIBC_") + gnu_get_libc_version();
    if (version_numbers(system) < version_numbers(it->second)) {
      report.problems.push_back("it needs " + it->second + " but this system has " + system +
                                "; use a variant built for an older glibc (manylinux_2_28) or a newer system");
    }
  }
  const auto& cxx_versions = libstdcxx_versions(loaded);
  if (!cxx_versions.empty()) {
    std::set<std::string> missing;
    for (const auto& sym : elf.symbols) {
      if (sym.defined || sym.version.empty()) continue;
      const std::string fam = family(sym.version);
      if ((fam == "GLIBCXX" || fam == "CXXABI") && !cxx_versions.contains(sym.version)) missing.insert(sym.version);
    }
    for (const auto& v : missing) {
      report.problems.push_back("it needs " + v +
                                ", which the libstdc++ of this process does not define; "
                                "use a variant built with an older toolchain or a newer libstdc++");
    }
  }
  return report;
}

void check_symbols(const ElfFile& elf, PreflightReport& report) {
  // Torch symbols: resolvable in the global scope or in a loaded library it needs.
  std::vector<void*> handles{RTLD_DEFAULT};
  for (const std::string& lib : elf.needed) {
    if (void* h = dlopen(lib.c_str(), RTLD_LAZY | RTLD_NOLOAD)) handles.push_back(h);
  }
  std::vector<std::string> missing_cxx;
  std::vector<std::string> missing_c;
  const bool has_python = process_has_python();
  for (const auto& sym : elf.symbols) {
    if (sym.defined || sym.weak) continue;
    if (is_python_symbol(sym.name)) {
      report.python_symbols.push_back(sym.name);
      if (!has_python) {
        if (python_stub_provides(sym.name)) {
          report.needs_python_stub = true;
        } else {
          report.problems.push_back("it uses the Python C-API function `" + sym.name +
                                    "`, which only works inside a Python process; load it from Python");
        }
      }
      continue;
    }
    const bool cxx = is_torch_cxx_symbol(sym.name);
    if (!cxx && !is_torch_c_symbol(sym.name)) continue;
    const bool found =
        std::any_of(handles.begin(), handles.end(), [&](void* h) { return dlsym(h, sym.name.c_str()) != nullptr; });
    if (!found) (cxx ? missing_cxx : missing_c).push_back(sym.name);
  }
  for (std::size_t i = 1; i < handles.size(); ++i) dlclose(handles[i]);
  if (!missing_cxx.empty()) {
    report.problems.push_back("it needs " + std::to_string(missing_cxx.size()) +
                              " torch symbol(s) that the LibTorch in this process does not export, e.g. `" +
                              demangle(missing_cxx.front()) +
                              "`: it was built for another torch version or C++ ABI; use the variant for this torch");
  }
  if (!missing_c.empty()) {
    std::string listed;
    for (std::size_t i = 0; i < missing_c.size() && i < 3; ++i) listed += (i ? "`, `" : "") + missing_c[i];
    report.problems.push_back("it needs " + std::to_string(missing_c.size()) +
                              " function(s) of torch's stable C ABI that the LibTorch in this process does not "
                              "export (`" +
                              listed +
                              "`): it was built for a newer torch; use a variant whose torch-stable-abi version is "
                              "at most this torch's, or upgrade torch");
  }
}

namespace {

Error not_loadable(const std::filesystem::path& path, const std::vector<std::string>& problems) {
  std::string msg = "`" + path.string() + "` cannot be loaded here:";
  for (const auto& p : problems) msg += "\n  - " + p;
  return Error{ErrorCode::kIncompatibleBinary, msg};
}

}  // namespace

Result<PreflightReport> check_loadable(const std::filesystem::path& path, const EnvironmentSource& env,
                                       const ElfFile* parsed) {
  std::optional<ElfFile> read;
  if (parsed == nullptr) {
    KH_ASSIGN_OR_RETURN(ElfFile file, ElfFile::read(path));
    read = std::move(file);
  }
  const ElfFile& elf = parsed != nullptr ? *parsed : *read;
  PreflightReport report = check_file(path, elf, env, TorchLibraries::of_this_process());
  if (!report.problems.empty()) return unexpected(not_loadable(path, report.problems));
  for (const auto& library : report.torch_libraries) KH_RETURN_IF_ERROR(load_torch_library(library));
  check_symbols(elf, report);
  if (!report.problems.empty()) return unexpected(not_loadable(path, report.problems));
  return report;
}

}  // namespace kernelhub::loader
