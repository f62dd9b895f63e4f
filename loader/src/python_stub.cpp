#include "kernelhub/loader/internal/python_stub.hpp"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <mutex>
#include <string>

#include "python_stub_bytes.hpp"  // generated: kPythonStubBytes, the built stub library

namespace kernelhub::loader {

namespace {
constexpr std::array<std::string_view, 6> kKnownPythonStubSymbols{"PyModule_Create2",         "PyModuleDef_Init",
                                                                  "PyModule_FromDefAndSpec2", "PyModule_AddObject",
                                                                  "PyModule_AddObjectRef",    "PyErr_SetString"};
}  // namespace

bool python_stub_provides(std::string_view symbol) {
  for (auto s : kKnownPythonStubSymbols) {
    if (s == symbol) return true;
  }
  return false;
}

bool process_has_python() {
  return dlsym(RTLD_DEFAULT, "Py_IsInitialized") != nullptr;
}

Status ensure_python_stub_loaded() {
  // Process-wide: the stub, once dlopened, provides its symbols to the whole process.
  static std::mutex mutex;
  static bool loaded = false;
  std::lock_guard lock(mutex);
  if (loaded || process_has_python()) return {};
  // The stub is written to an anonymous memory file: no temp file to clean up, nothing another
  // user could swap in between write and dlopen.
  const int fd = memfd_create("kernelhub-python-stub", MFD_CLOEXEC);
  if (fd < 0) return unexpected(os_error("memfd_create for the Python stub", errno));
  const auto* data = reinterpret_cast<const char*>(kPythonStubBytes);
  std::size_t left = sizeof(kPythonStubBytes);
  while (left > 0) {
    const ssize_t n = write(fd, data, left);
    if (n <= 0) {
      close(fd);
      return unexpected(os_error("writing the Python stub", errno));
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  // Deliberately never closed: kernels that bound to these symbols stay loaded for the process.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  close(fd);
  if (handle == nullptr) {
    const char* why = dlerror();
    return unexpected(ErrorCode::kLoadFailed,
                      std::string("cannot load the embedded Python stub: ") + (why ? why : "unknown error"));
  }
  loaded = true;
  return {};
}

}  // namespace kernelhub::loader
