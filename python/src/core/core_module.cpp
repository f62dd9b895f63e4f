// kernelhub._core: the C++ core, seen from Python.
//
// Each function answers one `kernels` loader call up to the import, with the GIL released: the
// revision-or-version rule, LOCAL_KERNELS, the lock file, revision resolution, variant selection,
// download, verification and metadata.json. It returns plain data (dicts, lists, strings).
// Importing the variant directory as a module stays in Python (kernelhub/_importer.py), exactly as
// the `kernels` package imports it; so do the kernels-compatible signatures and exception classes.
// Where kernels has its own words for an error, the core uses them (kernelhub/wording.hpp).
//
// Torch: _core links only the torch-free layers (fetch and below), so one build fits every torch.
// The caller passes the text of the torch it imported, read as the resolver reads an installed
// torch (resolver::TorchVersionInfo, torch_version_info.hpp); the machine
// (os, cpu, glibc, the CUDA driver and GPUs) is detected here, once per process.
//
// Errors: an Error from the core becomes kernelhub._core.CoreError(code, message, missing), code
// being the ErrorCode's stable name ("not_found", "offline_miss", ...) and missing what a not_found
// did not find ("repo", "revision", "version", "file", "lock" or ""); kernelhub/errors.py turns it
// into the exception class the `kernels` package would raise, so callers' except clauses keep working.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "kernelhub/client/repo_id.hpp"
#include "kernelhub/fetch.hpp"
#include "kernelhub/local_kernels.hpp"
#include "kernelhub/lockfile.hpp"
#include "kernelhub/resolver/torch_version_info.hpp"

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

// The environment the `kernels` package would see from this interpreter: the torch it imported,
// this machine, this Python's version, and `backend` when the caller names one ("cpu", "cuda", ...).
Result<resolver::Environment> python_environment(const EnvironmentSource& env, const resolver::TorchRuntime& torch,
                                                 const std::optional<std::string>& backend) {
  auto environment = resolver::Environment::detect(torch, env);
  if (!environment) return unexpected(environment.error());
  if (!env("KERNELHUB_PYTHON")) environment->python = resolver::Version{PY_MAJOR_VERSION, PY_MINOR_VERSION};
#ifdef Py_GIL_DISABLED
  environment->python_free_threaded = true;
#endif
  return with_backend(*std::move(environment), backend);  // "cpu", or the backend torch was built for
}

// What one Python call asks for: the request, the torch and the backend its environment is built from.
struct Call {
  FetchRequest request;
  resolver::TorchRuntime torch;
  std::optional<std::string> backend;

  Result<FetchContext> context(const EnvironmentSource& env) const {
    KH_ASSIGN_OR_RETURN(resolver::Environment environment, python_environment(env, torch, backend));
    return FetchContext{std::move(environment), env, nullptr};
  }
};

// A kernels-style request. A Python process imports the variant as a module, so pure-Python
// variants (noarch, universal) qualify and no op library is needed; errors about the request
// itself are in the kernels package's words.
Call make_call(std::optional<std::string> revision, std::optional<int> version, bool offline, bool trust_remote_code,
               std::vector<std::string> trusted_repos, const resolver::TorchRuntime& torch,
               std::optional<std::string> backend) {
  FetchRequest request;
  request.revision = std::move(revision);
  request.version = version;
  request.offline = offline;
  request.trust_remote_code = trust_remote_code;
  request.trusted_repos = std::move(trusted_repos);
  request.native_only = false;
  request.wording = Wording::kKernels;
  return Call{std::move(request), torch, std::move(backend)};
}

// A fetched variant and where it came from: a Hub repo (the module gets a RepoInfo) or a directory.
struct Fetched {
  FetchedVariant variant;
  bool from_hub = false;
  bool pinned = false;  // asked for by its full commit: immutable, so Python may keep the module
};

// Where the request's source is a Hub repo, fetch it; the revision as asked says whether it was pinned.
Result<Fetched> fetch_from_hub(Call call, const std::string& repo_id, const EnvironmentSource& env) {
  KH_ASSIGN_OR_RETURN(call.request.source, client::RepoId::parse(repo_id));
  KH_ASSIGN_OR_RETURN(FetchContext ctx, call.context(env));
  KH_ASSIGN_OR_RETURN(FetchedVariant fetched, fetch_variant(call.request, ctx));
  const bool pinned = call.request.revision == fetched.revision;
  return Fetched{std::move(fetched), true, pinned};
}

Result<Fetched> fetch_from_dir(Call call, const std::filesystem::path& dir, const EnvironmentSource& env) {
  call.request.source = dir;
  KH_ASSIGN_OR_RETURN(FetchContext ctx, call.context(env));
  KH_ASSIGN_OR_RETURN(FetchedVariant fetched, fetch_variant(call.request, ctx));
  return Fetched{std::move(fetched), false, false};
}

py::list decisions_to_python(const std::vector<resolver::Decision>& decisions) {
  py::list out;
  for (const auto& d : decisions) out.append(py::make_tuple(d.name, d.accepted(), resolver::to_string(d.reason)));
  return out;
}

// The fields of kernelhub.Metadata (the kernels package's), from the C++ parse of metadata.json.
// A variant older than metadata.json has only the id (from _ops.py) and its directory's name.
py::dict metadata_to_python(const Metadata& metadata) {
  py::dict out;
  out["id"] = metadata.id;
  out["name"] = metadata.name;
  if (metadata.raw.empty()) return out;
  out["version"] = metadata.version ? py::object(py::int_(*metadata.version)) : py::none();
  out["license"] = metadata.license;
  out["upstream"] = metadata.upstream ? py::object(py::str(*metadata.upstream)) : py::none();
  out["source"] = metadata.source ? py::object(py::str(*metadata.source)) : py::none();
  out["python_depends"] = metadata.python_depends;
  py::dict backend;
  backend["type"] = metadata.backend;
  if (!metadata.archs.empty()) backend["archs"] = metadata.archs;
  out["backend"] = backend;
  return out;
}

py::dict fetched_to_python(const Fetched& fetched) {
  const FetchedVariant& variant = fetched.variant;
  py::dict timings;
  timings["resolve"] = variant.timings.resolve;
  timings["download"] = variant.timings.download;
  timings["verify"] = variant.timings.verify;
  timings["requests"] = variant.timings.requests;
  timings["bytes_hashed"] = variant.timings.bytes_hashed;
  py::dict out;
  out["path"] = variant.path.string();
  out["variant"] = variant.variant;
  out["revision"] = variant.revision;
  out["from_hub"] = fetched.from_hub;
  out["pinned"] = fetched.pinned;
  out["metadata"] = metadata_to_python(variant.metadata);
  out["decisions"] = decisions_to_python(variant.decisions);
  out["timings"] = timings;
  out["fallbacks"] = variant.fallbacks;
  return out;
}

// kernels' get_kernel up to the import (and, with `local_kernels` false, its install_kernel): the
// revision-or-version rule, then the directory LOCAL_KERNELS names for the repo, else the Hub.
py::dict fetch_kernel(const std::string& repo_id, std::optional<std::string> revision, std::optional<int> version,
                      std::optional<std::string> backend, bool offline, bool trust_remote_code,
                      std::vector<std::string> trusted_repos, const resolver::TorchRuntime& torch, bool local_kernels) {
  Call call = make_call(std::move(revision), version, offline, trust_remote_code, std::move(trusted_repos), torch,
                        std::move(backend));
  return fetched_to_python(without_gil<Fetched>([&]() -> Result<Fetched> {
    KH_RETURN_IF_ERROR(require_revision_or_version(call.request.revision, call.request.version));
    const EnvironmentSource env = process_environment();
    if (local_kernels) {
      KH_ASSIGN_OR_RETURN(auto dir, local_kernel_dir(repo_id, env, Wording::kKernels));
      if (dir) return fetch_from_dir(std::move(call), *dir, env);
    }
    return fetch_from_hub(std::move(call), repo_id, env);
  }));
}

// kernels' get_local_kernel up to the import: the best variant under `path` (or `path` itself).
py::dict fetch_local(const std::string& path, std::optional<std::string> backend, const resolver::TorchRuntime& torch) {
  Call call = make_call({}, {}, false, false, {}, torch, std::move(backend));
  return fetched_to_python(without_gil<Fetched>(
      [&]() -> Result<Fetched> { return fetch_from_dir(std::move(call), path, process_environment()); }));
}

// The lock of `repo_id` in a lock file, or in the text of a `kernels.lock` from the caller's package
// metadata, which Python found (`lock_source` names it). Errors: those of LockFile::read and parse,
// and kNotFound (Missing::kLock) in the kernels package's words.
Result<KernelLock> lock_entry(const std::string& repo_id, const std::optional<std::string>& lockfile,
                              const std::optional<std::string>& lock_json, const std::string& lock_source) {
  if (!lockfile && !lock_json) return unexpected(ErrorCode::kInvalidArgument, "neither a lock file nor its text");
  KH_ASSIGN_OR_RETURN(const LockFile lock,
                      lockfile ? LockFile::read(*lockfile) : LockFile::parse(*lock_json, lock_source));
  return lock.lock_of(repo_id, lockfile ? *lockfile : lock_source, Wording::kKernels);
}

// The commit a lock pins `repo_id` at (a locked layer repository needs it before it loads).
std::string locked_commit(const std::string& repo_id, std::optional<std::string> lockfile,
                          std::optional<std::string> lock_json, const std::string& lock_source) {
  return without_gil<KernelLock>([&] { return lock_entry(repo_id, lockfile, lock_json, lock_source); }).commit;
}

// kernels' load_kernel and get_locked_kernel up to the import: the variant at the commit a lock
// pins. A lock file is read by the fetch, which also checks the variant against the hashes that
// kernelhub.lock beside it records; a lock from package metadata gives its commit.
py::dict fetch_locked(const std::string& repo_id, std::optional<std::string> lockfile,
                      std::optional<std::string> lock_json, const std::string& lock_source,
                      std::optional<std::string> backend, bool offline, bool trust_remote_code,
                      std::vector<std::string> trusted_repos, const resolver::TorchRuntime& torch) {
  Call call = make_call({}, {}, offline, trust_remote_code, std::move(trusted_repos), torch, std::move(backend));
  return fetched_to_python(without_gil<Fetched>([&]() -> Result<Fetched> {
    if (lockfile) {
      call.request.lockfile = std::filesystem::path(*lockfile);
    } else {
      KH_ASSIGN_OR_RETURN(const KernelLock entry, lock_entry(repo_id, lockfile, lock_json, lock_source));
      call.request.revision = entry.commit;
    }
    auto fetched = fetch_from_hub(std::move(call), repo_id, process_environment());
    if (fetched) fetched->pinned = false;  // asked for by its lock, not by a commit
    return fetched;
  }));
}

// Whether any variant is accepted; `missing` lists the codes that mean "no kernel here" rather
// than an error to raise.
Result<bool> any_accepted(const Result<VariantDecisions>& decided, std::initializer_list<ErrorCode> missing) {
  if (!decided) {
    for (ErrorCode code : missing) {
      if (decided.error().code == code) return false;
    }
    return unexpected(decided.error());
  }
  return std::any_of(decided->decisions.begin(), decided->decisions.end(),
                     [](const resolver::Decision& d) { return d.accepted(); });
}

// kernels' has_kernel: whether a variant of the repo (or of the directory LOCAL_KERNELS names for
// it) runs here; nothing is downloaded but the listing. The publisher trust check of a load comes
// first. No variant that fits, an offline cache miss and a missing local directory are `False`.
bool has_kernel(const std::string& repo_id, std::optional<std::string> revision, std::optional<int> version,
                std::optional<std::string> backend, bool trust_remote_code, std::vector<std::string> trusted_repos,
                const resolver::TorchRuntime& torch) {
  Call call = make_call(std::move(revision), version, false, trust_remote_code, std::move(trusted_repos), torch,
                        std::move(backend));
  return without_gil<bool>([&]() -> Result<bool> {
    KH_RETURN_IF_ERROR(require_revision_or_version(call.request.revision, call.request.version));
    const EnvironmentSource env = process_environment();
    KH_ASSIGN_OR_RETURN(auto dir, local_kernel_dir(repo_id, env, Wording::kKernels));
    KH_ASSIGN_OR_RETURN(FetchContext ctx, call.context(env));
    if (dir) {
      call.request.source = *dir;
      return any_accepted(variant_decisions(call.request, ctx),
                          {ErrorCode::kNotFound, ErrorCode::kNoCompatibleVariant, ErrorCode::kOfflineMiss});
    }
    KH_ASSIGN_OR_RETURN(call.request.source, client::RepoId::parse(repo_id));
    return any_accepted(variant_decisions(call.request, ctx, /*check_trust=*/true),
                        {ErrorCode::kNoCompatibleVariant, ErrorCode::kOfflineMiss});
  });
}

// kernels' get_kernel_variants: every variant of the repo at the revision, best first, each as
// (name, accepted, reason).
py::list kernel_variants(const std::string& repo_id, std::optional<std::string> revision, std::optional<int> version,
                         std::optional<std::string> backend, const resolver::TorchRuntime& torch) {
  Call call = make_call(std::move(revision), version, false, false, {}, torch, std::move(backend));
  return decisions_to_python(
      without_gil<std::vector<resolver::Decision>>([&]() -> Result<std::vector<resolver::Decision>> {
        KH_RETURN_IF_ERROR(require_revision_or_version(call.request.revision, call.request.version));
        const EnvironmentSource env = process_environment();
        KH_ASSIGN_OR_RETURN(call.request.source, client::RepoId::parse(repo_id));
        KH_ASSIGN_OR_RETURN(FetchContext ctx, call.context(env));
        KH_ASSIGN_OR_RETURN(VariantDecisions decided, variant_decisions(call.request, ctx));
        return std::move(decided.decisions);
      }));
}

// metadata.json's text, read as get_kernel reads it (kernels' Metadata.read_from_file).
py::dict parse_metadata(const std::string& text) {
  return metadata_to_python(value_or_raise(Metadata::parse(text)));
}

py::dict environment(std::optional<std::string> backend, const resolver::TorchRuntime& torch) {
  const EnvironmentSource env = process_environment();
  const resolver::Environment e = value_or_raise(python_environment(env, torch, backend));
  py::dict out;
  out["os"] = e.os;
  out["cpu"] = e.cpu;
  out["torch"] = e.torch ? e.torch->to_string() : "";
  out["cxx11_abi"] = e.cxx11_abi ? py::object(py::bool_(*e.cxx11_abi)) : py::none();
  out["python"] = e.python ? e.python->to_string() : "";
  out["torch_backend"] = e.torch_backend.to_environment();
  out["backend"] = e.backend.to_environment();
  out["backend_reason"] = e.backend_reason;
  auto native = e.native_variant();
  out["native_variant"] = native ? native->to_string() : "";
  return out;
}

std::string describe(const resolver::TorchRuntime& torch) {
  if (!torch.version) return "TorchRuntime(no torch)";
  std::string abi = torch.cxx11_abi ? (*torch.cxx11_abi ? "cxx11" : "cxx98") : "abi unknown";
  return "TorchRuntime(torch " + torch.version->to_string() + ", " + abi + ", " + torch.backend.to_environment() + ")";
}

}  // namespace
}  // namespace kernelhub::python

PYBIND11_MODULE(_core, m) {
  using namespace kernelhub::python;
  namespace resolver = kernelhub::resolver;
  m.doc() = "kernelhub's C++ core: resolve, select, download and verify kernel variants";
  static py::exception<std::runtime_error> error_type(m, "CoreError");
  core_error_type = error_type.ptr();

  py::class_<resolver::TorchRuntime>(
      m, "TorchRuntime", "The torch a Python process imported, as kernels reads it (torch_version_info.hpp).")
      .def(
          py::init([](std::optional<std::string> version, std::optional<bool> cxx11_abi,
                      std::optional<std::string> cuda, std::optional<std::string> hip, std::optional<std::string> xpu) {
            // No version: no torch in the process, so (as in kernels) only variants that need no
            // torch build qualify.
            if (!version) return resolver::TorchRuntime{};
            return value_or_raise(resolver::TorchVersionInfo{*version, cuda, hip, xpu, cxx11_abi}.runtime());
          }),
          py::kw_only(), py::arg("version") = py::none(), py::arg("cxx11_abi") = py::none(),
          py::arg("cuda") = py::none(), py::arg("hip") = py::none(), py::arg("xpu") = py::none(),
          "From torch.__version__, torch.compiled_with_cxx11_abi() and torch.version.cuda / hip / xpu; "
          "no version: no torch.")
      .def("__repr__", &describe);
  const auto no_torch = resolver::TorchRuntime{};

  m.def("fetch_kernel", &fetch_kernel, py::arg("repo_id"), py::kw_only(), py::arg("revision") = py::none(),
        py::arg("version") = py::none(), py::arg("backend") = py::none(), py::arg("offline") = false,
        py::arg("trust_remote_code") = false, py::arg("trusted_repos") = std::vector<std::string>{},
        py::arg("torch") = no_torch, py::arg("local_kernels") = true,
        "get_kernel (and, with local_kernels=False, install_kernel) up to the import: the variant that runs here, "
        "from the directory LOCAL_KERNELS names or the Hub, downloaded and verified.");
  m.def("fetch_local", &fetch_local, py::arg("path"), py::arg("backend") = py::none(), py::kw_only(),
        py::arg("torch") = no_torch,
        "get_local_kernel up to the import: the best variant under a directory (or the directory itself), verified.");
  m.def(
      "fetch_locked", &fetch_locked, py::arg("repo_id"), py::kw_only(), py::arg("lockfile") = py::none(),
      py::arg("lock_json") = py::none(), py::arg("lock_source") = "", py::arg("backend") = py::none(),
      py::arg("offline") = false, py::arg("trust_remote_code") = false,
      py::arg("trusted_repos") = std::vector<std::string>{}, py::arg("torch") = no_torch,
      "load_kernel and get_locked_kernel up to the import: the variant at the commit a lock file (or its text) pins.");
  m.def("locked_commit", &locked_commit, py::arg("repo_id"), py::kw_only(), py::arg("lockfile") = py::none(),
        py::arg("lock_json") = py::none(), py::arg("lock_source") = "",
        "The commit a lock file (or its text) pins the repo at.");
  m.def("has_kernel", &has_kernel, py::arg("repo_id"), py::kw_only(), py::arg("revision") = py::none(),
        py::arg("version") = py::none(), py::arg("backend") = py::none(), py::arg("trust_remote_code") = false,
        py::arg("trusted_repos") = std::vector<std::string>{}, py::arg("torch") = no_torch,
        "Whether a variant of the repo (or of its LOCAL_KERNELS directory) runs here.");
  m.def("kernel_variants", &kernel_variants, py::arg("repo_id"), py::kw_only(), py::arg("revision") = py::none(),
        py::arg("version") = py::none(), py::arg("backend") = py::none(), py::arg("torch") = no_torch,
        "Every variant of a Hub repo at a revision, best first, as (name, accepted, reason).");
  m.def("parse_metadata", &parse_metadata, py::arg("text"), "metadata.json's fields, as get_kernel reads them.");
  m.def("environment", &environment, py::arg("backend") = py::none(), py::kw_only(), py::arg("torch") = no_torch,
        "This process as variant selection sees it, with the torch given.");
}
