#include "kernelhub/loader/internal/preflight.hpp"

#include <cxxabi.h>
#include <dlfcn.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "kernelhub/binary_format/internal/torch_libraries.hpp"
#include "kernelhub/loader/internal/python_stub.hpp"

namespace kernelhub::loader {

namespace {

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

}  // namespace

void check_symbols(const binary_format::ElfFile& elf, binary_format::PreflightReport& report) {
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

Result<binary_format::PreflightReport> check_loadable(const std::filesystem::path& path, const EnvironmentSource& env,
                                                      const binary_format::ElfFile* parsed) {
  std::optional<binary_format::ElfFile> read;
  if (parsed == nullptr) {
    KH_ASSIGN_OR_RETURN(binary_format::ElfFile file, binary_format::ElfFile::read(path));
    read = std::move(file);
  }
  const binary_format::ElfFile& elf = parsed != nullptr ? *parsed : *read;
  binary_format::PreflightReport report =
      binary_format::check_file(path, elf, env, binary_format::TorchLibraries::of_this_process());
  if (!report.problems.empty()) return unexpected(not_loadable(path, report.problems));
  for (const auto& library : report.torch_libraries) KH_RETURN_IF_ERROR(binary_format::load_torch_library(library));
  check_symbols(elf, report);
  if (!report.problems.empty()) return unexpected(not_loadable(path, report.problems));
  return report;
}

}  // namespace kernelhub::loader
