#include "kernelhub/binary_format/internal/file_checks.hpp"

#include <elf.h>
#include <gnu/libc-version.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "kernelhub/binary_format/internal/elf_identity.hpp"
#include "library_paths.hpp"
#include "loaded_libraries.hpp"

namespace kernelhub::binary_format {

namespace {

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
  for (const auto& dir : runpath_dirs(path, elf)) dirs.push_back(dir.string());
  if (auto ld = env(env_vars::kLdLibraryPath)) {
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
    auto elf = ElfFile::read(it->second, ElfParts::kNoSymbols);
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
  if (!elf.is_64bit || !elf.little_endian || elf.machine != host_machine()) {
    report.problems.push_back("it is built for " + std::string(machine_name(elf.machine)) +
                              (elf.is_64bit ? "" : " (32-bit)") + ", this process is " +
                              std::string(machine_name(host_machine())) + "; use the variant built for this cpu");
    return report;
  }
  if (elf.type != ET_DYN)
    report.problems.push_back("it is not a shared library (ELF type " + std::to_string(elf.type) + ")");
  // A relocation this machine's dynamic linker does not apply fails dlopen; say which before it.
  for (std::uint32_t type : elf.relocation_types) {
    if (dynamic_relocation_name(elf.machine, type).empty()) {
      report.problems.push_back("it has dynamic relocations of type " + std::to_string(type) + ", which the " +
                                std::string(machine_name(elf.machine)) +
                                " dynamic linker does not apply (a library linked wrongly, e.g. from objects "
                                "built without -fPIC); rebuild it as a shared library of position-independent code");
    }
  }

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

std::vector<std::filesystem::path> runpath_dirs(const std::filesystem::path& path, const ElfFile& elf) {
  std::vector<std::filesystem::path> dirs;
  const std::string origin = path.parent_path().string();
  for (const auto& entry : elf.runpath) {
    for (const std::string& dir : split_path_list(entry)) dirs.emplace_back(expand_origin(dir, origin));
  }
  return dirs;
}

std::optional<std::filesystem::path> find_on_library_path(std::string_view soname, const EnvironmentSource& env) {
  for (const auto& dir : search_dirs({}, ElfFile{}, env)) {
    std::error_code ec;
    const std::filesystem::path candidate = std::filesystem::path(dir) / soname;
    if (!std::filesystem::is_regular_file(candidate, ec)) continue;
    // As the dynamic linker does, pass over a library of another class or machine (/lib32/...).
    auto elf = ElfFile::read(candidate, ElfParts::kNoSymbols);
    if (elf && elf->is_64bit && elf->little_endian && elf->machine == host_machine()) return candidate;
  }
  return std::nullopt;
}

}  // namespace kernelhub::binary_format
