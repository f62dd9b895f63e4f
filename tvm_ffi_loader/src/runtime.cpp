#include "kernelhub/tvm_ffi_loader/internal/runtime.hpp"

#include <dlfcn.h>
#include <link.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

#include <mutex>

#include "kernelhub/binary_format/internal/elf_file.hpp"
#include "kernelhub/binary_format/internal/file_checks.hpp"
#include "kernelhub/resolver/internal/python_environment.hpp"
#include "shared_library.hpp"

namespace kernelhub::tvm_ffi_loader {

namespace {

constexpr const char* kSoname = "libtvm_ffi.so";
constexpr const char* kAlreadyLoaded = "already loaded in this process";
constexpr const char* kInstallHint =
    "install the runtime with `pip install apache-tvm-ffi` (into the Python environment that python3 runs here), "
    "or set KERNELHUB_TVM_FFI_LIBRARY to the path of a libtvm_ffi.so (`python -c \"import tvm_ffi.libinfo; "
    "print(tvm_ffi.libinfo.find_libtvm_ffi())\"` prints the one a Python environment has)";

// "`a`, `b`", for messages.
std::string quoted_list(const std::vector<std::filesystem::path>& paths) {
  std::string out;
  for (const auto& path : paths) out += (out.empty() ? "`" : ", `") + path.string() + "`";
  return out;
}

std::string bytes(const TVMFFIByteArray& array) {
  return array.data != nullptr ? std::string(array.data, array.size) : std::string();
}

}  // namespace

struct Runtime::Api {
  SharedLibrary library;
  decltype(&TVMFFIGetVersion) get_version = nullptr;
  decltype(&TVMFFIErrorMoveFromRaised) error_move_from_raised = nullptr;
  decltype(&TVMFFIObjectDecRef) object_dec_ref = nullptr;
  decltype(&TVMFFIEnvSetStream) env_set_stream = nullptr;
  decltype(&TVMFFIEnvGetStream) env_get_stream = nullptr;
};

resolver::Version RuntimeVersion::major_minor() const {
  return resolver::Version{static_cast<int>(major), static_cast<int>(minor)};
}

std::string RuntimeVersion::to_string() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

ProgramLibraryDirs program_library_dirs() {
  ProgramLibraryDirs out;
  Dl_info info{};
  link_map* map = nullptr;
  if (dladdr1(reinterpret_cast<void*>(&program_library_dirs), &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) ==
          0 ||
      map == nullptr) {
    return out;
  }
  std::error_code ec;
  // The executable's link map has no name; a shared library's is the path it was loaded from.
  out.object = map->l_name != nullptr && map->l_name[0] != '\0' ? std::filesystem::path(map->l_name)
                                                                : std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec || out.object.empty()) return out;
  if (auto elf = binary_format::ElfFile::read(out.object, binary_format::ElfParts::kNoSymbols)) {
    out.dirs = binary_format::runpath_dirs(out.object, *elf);
  }
  return out;
}

Result<RuntimeLocation> locate_runtime(const EnvironmentSource& env) {
  return locate_runtime(env, program_library_dirs());
}

Result<RuntimeLocation> locate_runtime(const EnvironmentSource& env, const ProgramLibraryDirs& program) {
  if (SharedLibrary loaded = SharedLibrary::if_loaded(kSoname, RTLD_LAZY)) {
    return RuntimeLocation{loaded.path(), kAlreadyLoaded};
  }
  if (auto named = env(env_vars::kKernelhubTvmFfiLibrary)) {
    std::error_code ec;
    const std::filesystem::path path = std::filesystem::absolute(*named, ec);
    if (ec || !std::filesystem::is_regular_file(path, ec)) {
      return unexpected(ErrorCode::kNotFound,
                        "KERNELHUB_TVM_FFI_LIBRARY=`" + *named + "` names no file (`" + path.string() +
                            "` does not exist); set it to the path of a libtvm_ffi.so, or unset it to use the runtime "
                            "this program was built with, else the apache-tvm-ffi package of the Python "
                            "environment, else one on the library search path. " +
                            std::string(kInstallHint));
    }
    return RuntimeLocation{path, std::string(env_vars::kKernelhubTvmFfiLibrary)};
  }
  for (const auto& dir : program.dirs) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(dir / kSoname, ec)) {
      // $ORIGIN/../lib/kernelhub as the dynamic linker resolves it: without the `..`.
      const auto path = std::filesystem::canonical(dir / kSoname, ec);
      return RuntimeLocation{ec ? dir / kSoname : path,
                             "the runtime `" + program.object.string() + "` was built with, from its RUNPATH"};
    }
  }
  const std::string program_note =
      program.dirs.empty()
          ? "this program (`" + program.object.string() + "`) was built to look nowhere else (no RUNPATH)"
          : "none is where this program (`" + program.object.string() + "`) was built to look (" +
                quoted_list(program.dirs) + ")";
  std::string python_note;
  if (auto python = resolver::find_python_environment(env)) {
    for (const auto& dir : python->package_dirs) {
      std::error_code ec;
      const std::filesystem::path candidate = dir / "tvm_ffi" / "lib" / kSoname;
      if (std::filesystem::is_regular_file(candidate, ec)) {
        return RuntimeLocation{candidate, "the apache-tvm-ffi package of the Python environment " +
                                              python->prefix.string() + " (" + python->found_by + ")"};
      }
    }
    python_note = "the Python environment " + python->prefix.string() + " (" + python->found_by +
                  ") has no apache-tvm-ffi package";
  } else {
    python_note = "no Python environment to look in (" + python.error().message + ")";
  }
  if (auto system = binary_format::find_on_library_path(kSoname, env))
    return RuntimeLocation{*system, "the library search path"};
  return unexpected(ErrorCode::kNotFound,
                    std::string("no TVM-FFI runtime (libtvm_ffi.so) found: none is loaded in this process, "
                                "KERNELHUB_TVM_FFI_LIBRARY is not set, ") +
                        program_note + ", " + python_note + ", and none is on the library search path; " +
                        kInstallHint);
}

Runtime::Runtime(RuntimeLocation location, RuntimeVersion version, std::unique_ptr<const Api> api)
    : location_(std::move(location)), version_(version), api_(std::move(api)) {}

Runtime::~Runtime() = default;

Result<std::shared_ptr<const Runtime>> Runtime::open(const RuntimeLocation& location, const EnvironmentSource& env) {
  auto api = std::make_unique<Api>();
  if (location.found_by == kAlreadyLoaded) {
    api->library = SharedLibrary::if_loaded(location.path, RTLD_NOW);
  }
  if (!api->library) {
    KH_ASSIGN_OR_RETURN(binary_format::ElfFile elf, binary_format::ElfFile::read(location.path));
    const binary_format::PreflightReport report =
        binary_format::check_file(location.path, elf, env, binary_format::TorchLibraries{});
    if (!report.problems.empty()) {
      std::string message =
          "the TVM-FFI runtime `" + location.path.string() + "` (" + location.found_by + ") cannot be loaded here:";
      for (const auto& problem : report.problems) message += "\n  - " + problem;
      return unexpected(ErrorCode::kIncompatibleBinary, message + "\n" + kInstallHint);
    }
    KH_ASSIGN_OR_RETURN(api->library, SharedLibrary::open(location.path, RTLD_NOW | RTLD_LOCAL));
  }
  const auto resolve = [&](auto& entry, const char* name) -> Status {
    entry = reinterpret_cast<std::remove_reference_t<decltype(entry)>>(api->library.symbol(name));
    if (entry == nullptr) {
      return unexpected(ErrorCode::kLoadFailed, "`" + location.path.string() + "` (" + location.found_by +
                                                    ") is not a TVM-FFI runtime: it does not export `" + name + "`; " +
                                                    kInstallHint);
    }
    return {};
  };
  KH_RETURN_IF_ERROR(resolve(api->get_version, "TVMFFIGetVersion"));
  KH_RETURN_IF_ERROR(resolve(api->error_move_from_raised, "TVMFFIErrorMoveFromRaised"));
  KH_RETURN_IF_ERROR(resolve(api->object_dec_ref, "TVMFFIObjectDecRef"));
  KH_RETURN_IF_ERROR(resolve(api->env_set_stream, "TVMFFIEnvSetStream"));
  KH_RETURN_IF_ERROR(resolve(api->env_get_stream, "TVMFFIEnvGetStream"));
  TVMFFIVersion raw{};
  api->get_version(&raw);
  const RuntimeVersion version{raw.major, raw.minor, raw.patch};
  return std::make_shared<const Runtime>(location, version, std::move(api));
}

Result<std::shared_ptr<const Runtime>> Runtime::of_process(const EnvironmentSource& env) {
  // Process-wide: a process has one TVM-FFI runtime, the one dlopen loaded first.
  static std::mutex mutex;
  static std::shared_ptr<const Runtime> runtime;
  std::lock_guard lock(mutex);
  if (runtime) return runtime;
  KH_ASSIGN_OR_RETURN(RuntimeLocation location, locate_runtime(env));
  KH_ASSIGN_OR_RETURN(runtime, open(location, env));
  return runtime;
}

Status Runtime::require(const resolver::Version& wanted, const std::string& variant) const {
  if (version_.major_minor() == wanted) return {};
  std::string message = "variant `" + variant + "` is built for TVM-FFI " + wanted.to_string() +
                        ", but the TVM-FFI runtime here is " + version_.to_string() + " (`" + location_.path.string() +
                        "`, " + location_.found_by + "); ";
  if (location_.found_by == kAlreadyLoaded) {
    message +=
        "a process runs one TVM-FFI runtime, so use a variant built for TVM-FFI " + version_.major_minor().to_string();
  } else {
    message += "install apache-tvm-ffi " + wanted.to_string() +
               ".* (pip install 'apache-tvm-ffi>=" + wanted.to_string() + ",<" + std::to_string(wanted.major) + "." +
               std::to_string(wanted.minor + 1) + "') or set KERNELHUB_TVM_FFI_LIBRARY to a libtvm_ffi.so of TVM-FFI " +
               wanted.to_string();
  }
  return unexpected(ErrorCode::kIncompatibleBinary, message);
}

Status Runtime::make_global() const {
  SharedLibrary global = SharedLibrary::if_loaded(location_.path, RTLD_NOW | RTLD_GLOBAL);
  if (!global) {
    return unexpected(ErrorCode::kLoadFailed,
                      "the TVM-FFI runtime `" + location_.path.string() + "` could not be made global: " +
                          (dlerror() != nullptr ? "the dynamic linker refused" : "it is no longer loaded"));
  }
  return {};  // RTLD_GLOBAL stays with the library after this reference is closed
}

Runtime::Raised Runtime::take_raised() const {
  TVMFFIObjectHandle error = nullptr;
  api_->error_move_from_raised(&error);
  if (error == nullptr) return Raised{"RuntimeError", "the call failed without raising an error", ""};
  const TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(error);
  Raised raised{bytes(cell->kind), bytes(cell->message), bytes(cell->backtrace)};
  api_->object_dec_ref(error);
  return raised;
}

void Runtime::release(void* object) const {
  if (object != nullptr) api_->object_dec_ref(object);
}

Result<void*> Runtime::set_stream(std::int32_t device_type, std::int32_t device_id, void* stream) const {
  void* previous = nullptr;
  if (api_->env_set_stream(device_type, device_id, stream, &previous) != 0) {
    const Raised raised = take_raised();
    return unexpected(ErrorCode::kInvalidArgument, "TVMFFIEnvSetStream(" + std::to_string(device_type) + ", " +
                                                       std::to_string(device_id) + ") failed: " + raised.kind + ": " +
                                                       raised.message);
  }
  return previous;
}

void* Runtime::current_stream(std::int32_t device_type, std::int32_t device_id) const {
  return api_->env_get_stream(device_type, device_id);
}

}  // namespace kernelhub::tvm_ffi_loader
