// PythonEnvironment: the Python environment that `python3` would run in here, and where it keeps
// its packages, found from files (no Python is started where the layout says enough):
//   1. VIRTUAL_ENV         an activated virtual environment (venv, virtualenv, uv)
//   2. `python3` on PATH   the virtual environment it belongs to (a pyvenv.cfg beside its bin/),
//                          else the installation it is part of (symlinks resolved: /usr,
//                          /opt/conda, ~/.pyenv/versions/3.12.4); a script in its place (a
//                          pyenv shim) is run once, as `python3 -S -c 'print(sys.prefix)'`
// Package directories, in the order Python searches them: a virtual environment's
// lib/python3.X/site-packages (then its base's, with include-system-site-packages = true); an
// installation's user site (~/.local/lib/python3.X/site-packages, unless PYTHONNOUSERSITE), then
// lib/python3.X/site-packages and Debian's dist-packages. Only those that exist are listed (a
// free-threaded build's folder is lib/python3.Xt).
//
// What the `kernels` package would see of that Python when it selects a variant (runtime):
//   version, free-threaded  the lib/python3.X[t] folder of its first package directory, else
//                           pyvenv.cfg's version, else the interpreter's name (python3.11)
//   mlx                     an mlx package in one of its package directories
//   tvm_ffi                 the version tvm_ffi/_version.py says (as tvm_ffi.__version__ would)
//
// Thread safety: free functions; they read files, and may start one process (see 2).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/resolver/environment.hpp"

namespace kernelhub::resolver {

struct PythonEnvironment {
  std::filesystem::path prefix;                     // sys.prefix
  std::string found_by;                             // "VIRTUAL_ENV", "python3 on PATH: /usr/bin/python3"
  std::vector<std::filesystem::path> package_dirs;  // search order, existing ones only
  std::optional<PythonRuntime> runtime;             // none when no file says its version
};

// Reads VIRTUAL_ENV, PATH, HOME and PYTHONNOUSERSITE from `env`. Errors: kNotFound when
// VIRTUAL_ENV names no directory, or it is unset and no python3 is on PATH (the message names
// the PATH searched); kIo when a python3 script does not say its prefix.
Result<PythonEnvironment> find_python_environment(const EnvironmentSource& env);

// The version an installed apache-tvm-ffi says as tvm_ffi.__version__, read from the package
// folder `package` (site-packages/tvm_ffi) without importing it: its _version.py's
// `__version__ = version = '0.1.15.post2'` (setuptools-scm); 0.0 where that is missing or says
// nothing, as the package says 0.0.0.dev0 then.
Version tvm_ffi_package_version(const std::filesystem::path& package);

}  // namespace kernelhub::resolver
