// kernelhub._core: the C++ core, seen from Python.
//
// Each function does the heavy part of one `kernels` loader call — revision resolution, variant
// selection, download, verification — in C++, with the GIL released, and returns plain data
// (dicts, lists, strings). Importing the variant directory as a module stays in Python
// (kernelhub/_importer.py), exactly as the `kernels` package imports it.
//
// Errors: an Error from the core becomes kernelhub._core.CoreError(code, message, missing), code
// being the ErrorCode's stable name ("not_found", "offline_miss", ...) and missing what a not_found
// did not find ("repo", "revision", "version", "file" or ""); kernelhub/errors.py turns it into the
// exception class the `kernels` package would raise, so callers' except clauses keep working.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <optional>
#include <string>
#include <vector>

#include "kernelhub/client/repo_id.hpp"
#include "kernelhub/fetch.hpp"
#include "kernelhub/loader/torch_runtime.hpp"

namespace py = pybind11;

namespace kernelhub::python {
namespace {

// Set once, when the module is initialised (with the GIL held).
PyObject* core_error_type = nullptr;

// Raises kernelhub._core.CoreError(code, message, missing). Needs the GIL.
[[noreturn]] void raise_core_error(const Error& error) {
  py::tuple args =
      py::make_tuple(std::string(to_string(error.code)), error.message, std::string(to_string(error.missing)));
  PyErr_SetObject(core_error_type, args.ptr());
  throw py::error_already_set();
}

template <typename T>
T value_or_raise(Result<T> result) {
  if (!result) raise_core_error(result.error());
  return *std::move(result);
}

// The environment the `kernels` package would see from this interpreter: the process's LibTorch
// and machine, this Python's version, and `backend` when the caller names one ("cpu", "cuda", ...).
Result<resolver::Environment> python_environment(const EnvironmentSource& env,
                                                 const std::optional<std::string>& backend) {
  auto environment = resolver::Environment::detect(loader::torch_runtime(), env);
  if (!environment) return unexpected(environment.error());
  if (!env("KERNELHUB_PYTHON")) environment->python = resolver::Version{PY_MAJOR_VERSION, PY_MINOR_VERSION};
#ifdef Py_GIL_DISABLED
  environment->python_free_threaded = true;
#endif
  return with_backend(*std::move(environment), backend);  // "cpu", or the backend torch was built for
}

py::list decisions_to_python(const std::vector<resolver::Decision>& decisions) {
  py::list out;
  for (const auto& d : decisions) out.append(py::make_tuple(d.name, d.accepted(), resolver::to_string(d.reason)));
  return out;
}

py::dict fetched_to_python(const FetchedVariant& fetched) {
  py::dict timings;
  timings["resolve"] = fetched.timings.resolve;
  timings["download"] = fetched.timings.download;
  timings["verify"] = fetched.timings.verify;
  timings["requests"] = fetched.timings.requests;
  timings["bytes_hashed"] = fetched.timings.bytes_hashed;
  py::dict out;
  out["path"] = fetched.path.string();
  out["variant"] = fetched.variant;
  out["revision"] = fetched.revision;
  out["id"] = fetched.metadata.id;
  out["name"] = fetched.metadata.name;
  out["version"] = fetched.metadata.version ? py::object(py::int_(*fetched.metadata.version)) : py::none();
  out["backend"] = fetched.metadata.backend;
  out["decisions"] = decisions_to_python(fetched.decisions);
  out["timings"] = timings;
  return out;
}

py::dict decisions_result_to_python(const VariantDecisions& decided) {
  py::dict out;
  out["revision"] = decided.revision;
  out["commit"] = decided.commit;
  out["root"] = decided.root.string();
  out["decisions"] = decisions_to_python(decided.decisions);
  return out;
}

// What a `kernels`-style call asks for. A Python process imports the variant as a module, so
// pure-Python variants (noarch, universal) qualify and no op library is needed.
FetchRequest make_request(std::optional<std::string> revision, std::optional<int> version, bool offline,
                          bool trust_remote_code, std::vector<std::string> trusted_repos,
                          std::optional<std::string> lockfile) {
  FetchRequest request;
  request.revision = std::move(revision);
  request.version = version;
  request.offline = offline;
  request.trust_remote_code = trust_remote_code;
  request.trusted_repos = std::move(trusted_repos);
  if (lockfile) request.lockfile = std::filesystem::path(*lockfile);
  request.native_only = false;
  return request;
}

// Runs `work` with the GIL released (resolution, downloads and hashing need no Python).
template <typename T, typename Work>
T without_gil(Work work) {
  Result<T> result = unexpected(ErrorCode::kInternal, "not run");
  {
    py::gil_scoped_release no_gil;
    result = work();
  }
  return value_or_raise(std::move(result));
}

py::dict fetch_hub(const std::string& repo_id, std::optional<std::string> revision, std::optional<int> version,
                   std::optional<std::string> backend, bool offline, bool trust_remote_code,
                   std::vector<std::string> trusted_repos, std::optional<std::string> lockfile) {
  FetchRequest request = make_request(std::move(revision), version, offline, trust_remote_code,
                                      std::move(trusted_repos), std::move(lockfile));
  return fetched_to_python(without_gil<FetchedVariant>([&]() -> Result<FetchedVariant> {
    const EnvironmentSource env = process_environment();
    KH_ASSIGN_OR_RETURN(request.source, client::RepoId::parse(repo_id));
    KH_ASSIGN_OR_RETURN(resolver::Environment environment, python_environment(env, backend));
    return fetch_variant(request, FetchContext{std::move(environment), env, nullptr});
  }));
}

py::dict fetch_local(const std::string& path, std::optional<std::string> backend) {
  FetchRequest request = make_request({}, {}, false, false, {}, {});
  request.source = std::filesystem::path(path);
  return fetched_to_python(without_gil<FetchedVariant>([&]() -> Result<FetchedVariant> {
    const EnvironmentSource env = process_environment();
    KH_ASSIGN_OR_RETURN(resolver::Environment environment, python_environment(env, backend));
    return fetch_variant(request, FetchContext{std::move(environment), env, nullptr});
  }));
}

// With `check_trust`, the publisher trust check of a load comes first (as kernels' has_kernel).
py::dict hub_decisions(const std::string& repo_id, std::optional<std::string> revision, std::optional<int> version,
                       std::optional<std::string> backend, bool offline, bool check_trust, bool trust_remote_code,
                       std::vector<std::string> trusted_repos) {
  FetchRequest request =
      make_request(std::move(revision), version, offline, trust_remote_code, std::move(trusted_repos), {});
  return decisions_result_to_python(without_gil<VariantDecisions>([&]() -> Result<VariantDecisions> {
    const EnvironmentSource env = process_environment();
    KH_ASSIGN_OR_RETURN(request.source, client::RepoId::parse(repo_id));
    KH_ASSIGN_OR_RETURN(resolver::Environment environment, python_environment(env, backend));
    return variant_decisions(request, FetchContext{std::move(environment), env, nullptr}, check_trust);
  }));
}

py::dict local_decisions(const std::string& path, std::optional<std::string> backend) {
  FetchRequest request = make_request({}, {}, false, false, {}, {});
  request.source = std::filesystem::path(path);
  return decisions_result_to_python(without_gil<VariantDecisions>([&]() -> Result<VariantDecisions> {
    const EnvironmentSource env = process_environment();
    KH_ASSIGN_OR_RETURN(resolver::Environment environment, python_environment(env, backend));
    return variant_decisions(request, FetchContext{std::move(environment), env, nullptr});
  }));
}

py::dict environment(std::optional<std::string> backend) {
  const EnvironmentSource env = process_environment();
  const resolver::Environment e = value_or_raise(python_environment(env, backend));
  py::dict out;
  out["os"] = e.os;
  out["cpu"] = e.cpu;
  out["torch"] = e.torch ? e.torch->to_string() : "";
  out["python"] = e.python ? e.python->to_string() : "";
  out["torch_backend"] = e.torch_backend.to_environment();
  out["backend"] = e.backend.to_environment();
  out["backend_reason"] = e.backend_reason;
  auto native = e.native_variant();
  out["native_variant"] = native ? native->to_string() : "";
  return out;
}

}  // namespace
}  // namespace kernelhub::python

PYBIND11_MODULE(_core, m) {
  using namespace kernelhub::python;
  m.doc() = "kernelhub's C++ core: resolve, select, download and verify kernel variants";
  static py::exception<std::runtime_error> error_type(m, "CoreError");
  core_error_type = error_type.ptr();

  m.def("fetch_hub", &fetch_hub, py::arg("repo_id"), py::arg("revision") = py::none(), py::arg("version") = py::none(),
        py::arg("backend") = py::none(), py::arg("offline") = false, py::arg("trust_remote_code") = false,
        py::arg("trusted_repos") = std::vector<std::string>{}, py::arg("lockfile") = py::none(),
        "Resolve, select, download and verify the variant of a Hub repo that runs here; nothing is loaded.");
  m.def("fetch_local", &fetch_local, py::arg("path"), py::arg("backend") = py::none(),
        "The best variant under a local kernel directory (or the directory itself), verified.");
  m.def("hub_decisions", &hub_decisions, py::arg("repo_id"), py::arg("revision") = py::none(),
        py::arg("version") = py::none(), py::arg("backend") = py::none(), py::arg("offline") = false,
        py::arg("check_trust") = false, py::arg("trust_remote_code") = false,
        py::arg("trusted_repos") = std::vector<std::string>{},
        "Every variant of a Hub repo at a revision, best first, with why each is accepted or rejected.");
  m.def("local_decisions", &local_decisions, py::arg("path"), py::arg("backend") = py::none(),
        "Every variant under a local kernel directory, best first.");
  m.def("environment", &environment, py::arg("backend") = py::none(), "This process as variant selection sees it.");
}
