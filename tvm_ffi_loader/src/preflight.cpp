#include "kernelhub/tvm_ffi_loader/internal/preflight.hpp"

#include <algorithm>
#include <set>

#include "kernelhub/binary_format/internal/file_checks.hpp"
#include "kernelhub/binary_format/internal/torch_libraries.hpp"

namespace kernelhub::tvm_ffi_loader {

namespace {

constexpr std::string_view kFunctionPrefix = "__tvm_ffi_";
constexpr std::string_view kReservedPrefix = "__tvm_ffi__";  // metadata, doc, library context

// What ties a library to LibTorch: C++ symbols of c10, ATen or torch, and torch's stable C ABI.
bool is_torch_symbol(const std::string& name) {
  for (std::string_view prefix :
       {"_ZN3c10", "_ZNK3c10", "_ZN2at", "_ZNK2at", "_ZN5torch", "_ZNK5torch", "aoti_torch_", "torch_"}) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

std::string listed(const std::set<std::string>& names) {
  std::string out;
  std::size_t i = 0;
  for (const auto& name : names) {
    if (i == 3) return out + ", ...";
    out += (i++ ? "`, `" : "`") + name;
  }
  return out + "`";
}

}  // namespace

std::vector<std::string> exported_functions(const binary_format::ElfFile& elf) {
  std::set<std::string> names;
  for (const auto& symbol : elf.symbols) {
    if (!symbol.defined || !symbol.name.starts_with(kFunctionPrefix) || symbol.name.starts_with(kReservedPrefix)) {
      continue;
    }
    names.insert(symbol.name.substr(kFunctionPrefix.size()));
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> kind_problems(const binary_format::ElfFile& elf) {
  std::vector<std::string> problems;
  std::set<std::string> torch_libraries;
  for (const auto& needed : elf.needed) {
    if (binary_format::is_torch_library_name(needed)) torch_libraries.insert(needed);
  }
  std::set<std::string> torch_symbols;
  std::set<std::string> python_symbols;
  for (const auto& symbol : elf.symbols) {
    if (symbol.defined || symbol.weak) continue;
    if (is_torch_symbol(symbol.name)) torch_symbols.insert(symbol.name);
    if (symbol.name.starts_with("Py") || symbol.name.starts_with("_Py")) python_symbols.insert(symbol.name);
  }
  if (!torch_libraries.empty() || !torch_symbols.empty()) {
    problems.push_back(
        "it needs LibTorch (" +
        (torch_libraries.empty() ? "symbols " + listed(torch_symbols) : "libraries " + listed(torch_libraries)) +
        "): it is a torch build, not a tvm-ffi kernel, whatever its variant is called; load it with "
        "kernelhub::get_kernel (kernelhub/kernelhub.hpp) or from Python");
  }
  if (!python_symbols.empty()) {
    problems.push_back("it uses the Python C-API (" + listed(python_symbols) +
                       "), which only a Python process has; load it from Python");
  }
  if (exported_functions(elf).empty()) {
    problems.push_back(
        "it exports no TVM-FFI function (no `__tvm_ffi_<name>` symbol): not a tvm-ffi kernel "
        "(TVM_FFI_DLL_EXPORT_TYPED_FUNC makes them)");
  }
  return problems;
}

Status preflight(const std::filesystem::path& path, const binary_format::ElfFile& elf, const EnvironmentSource& env) {
  std::vector<std::string> problems = kind_problems(elf);
  // The file checks, once the kind is right (their messages about torch libraries assume a torch build).
  if (problems.empty()) {
    const binary_format::PreflightReport report =
        binary_format::check_file(path, elf, env, binary_format::TorchLibraries{});
    problems = report.problems;
  }
  if (problems.empty()) return {};
  std::string message = "`" + path.string() + "` cannot be loaded here:";
  for (const auto& problem : problems) message += "\n  - " + problem;
  return unexpected(ErrorCode::kIncompatibleBinary, message);
}

}  // namespace kernelhub::tvm_ffi_loader
