#include "kernelhub/binary_format/internal/torch_libraries.hpp"

#include <dlfcn.h>

#include <mutex>
#include <set>
#include <string>

#include "kernelhub/binary_format/internal/elf_file.hpp"
#include "library_paths.hpp"
#include "loaded_libraries.hpp"

namespace kernelhub::binary_format {

TorchLibraries TorchLibraries::at(const std::filesystem::path& lib_dir) {
  TorchLibraries out;
  out.lib_dir = lib_dir;
  if (lib_dir.empty()) return out;
  out.search_dirs.push_back(lib_dir);
  // torch's libraries all carry the same RPATH (the nvidia-* wheels relative to $ORIGIN); libc10
  // is the smallest to read.
  auto c10 = ElfFile::read(lib_dir / "libc10.so", ElfParts::kNoSymbols);
  if (!c10) return out;
  std::set<std::filesystem::path> seen{lib_dir};
  for (const auto& entry : c10->runpath) {
    for (const auto& dir : split_path_list(entry)) {
      std::error_code ec;
      auto resolved = std::filesystem::weakly_canonical(expand_origin(dir, lib_dir.string()), ec);
      if (ec || !std::filesystem::is_directory(resolved, ec)) continue;
      if (seen.insert(resolved).second) out.search_dirs.push_back(resolved);
    }
  }
  return out;
}

const TorchLibraries& TorchLibraries::of_this_process() {
  // Process-wide: the LibTorch the dynamic linker has loaded is one per process.
  static std::mutex mutex;
  static TorchLibraries cached;
  std::lock_guard lock(mutex);
  // Computed once LibTorch is there (a Python process may load it after us).
  if (cached.lib_dir.empty()) {
    const auto libraries = loaded_libraries();
    if (const auto c10 = libraries.find("libc10.so"); c10 != libraries.end()) {
      cached = at(std::filesystem::path(c10->second).parent_path());
    }
  }
  return cached;
}

std::optional<std::filesystem::path> TorchLibraries::find(std::string_view soname) const {
  // A NEEDED entry is a file name, never a path: anything else is not for us to resolve.
  if (soname.empty() || soname.find('/') != std::string_view::npos) return std::nullopt;
  for (const auto& dir : search_dirs) {
    std::error_code ec;
    const auto candidate = dir / soname;
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
  }
  return std::nullopt;
}

bool is_torch_library_name(std::string_view soname) {
  if (!soname.ends_with(".so")) return false;
  for (std::string_view prefix : {"libtorch", "libc10", "libcaffe2_"}) {
    if (soname.starts_with(prefix)) return true;
  }
  return soname == "libshm.so";
}

Status load_torch_library(const std::filesystem::path& path) {
  // Process-wide: mirrors what dlopen holds, which is the process's, and is never closed.
  static std::mutex mutex;
  static std::set<std::filesystem::path> loaded;
  std::lock_guard lock(mutex);
  if (loaded.contains(path)) return {};
  // Never closed: torch's hooks and the kernels bound to these libraries live as long as the
  // process, as after `import torch`.
  dlerror();
  if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    const char* why = dlerror();
    return unexpected(ErrorCode::kLoadFailed,
                      "cannot load torch's library `" + path.string() + "`: " + (why ? why : "unknown error"));
  }
  loaded.insert(path);
  return {};
}

Status ensure_torch_cuda_loaded() {
  const auto& torch = TorchLibraries::of_this_process();
  const auto path = torch.lib_dir / "libtorch_cuda.so";
  std::error_code ec;
  if (torch.lib_dir.empty() || !std::filesystem::exists(path, ec)) {
    return unexpected(ErrorCode::kNotFound, "this LibTorch (" + torch.lib_dir.string() +
                                                ") has no libtorch_cuda.so: it is a CPU-only build; install a CUDA "
                                                "build of torch or use a CPU variant");
  }
  return load_torch_library(path);
}

}  // namespace kernelhub::binary_format
