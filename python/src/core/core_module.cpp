// kernelhub._core: the C++ core, seen from Python.
//
// Each function answers one `kernels` loader call up to the import, with the GIL released: the
// revision-or-version rule, LOCAL_KERNELS, the lock file, revision resolution, variant selection,
// download, verification and metadata.json. It returns plain data (dicts, lists, strings).
// Importing the variant directory as a module stays in Python (kernelhub/_importer.py), exactly as
// the `kernels` package imports it; so do the kernels-compatible signatures and exception classes.
// Where kernels has its own words for an error or a warning, the core says them, written from what
// the fetch found (kernels_words/kernels_words.hpp).
//
// Torch: _core links only the torch-free layers (fetch and below), so one build fits every torch.
// The caller passes the text of the torch it imported, read as the resolver reads an installed
// torch (resolver::TorchVersionInfo, torch_version_info.hpp); the machine
// (os, cpu, glibc, the CUDA driver and GPUs) is detected here, once per process.
//
// Progress: a download reports to a Python callable (kernelhub/_progress.py draws it with
// huggingface_hub's bars), called with the GIL taken back at most ten times a second.
//
// Errors: an Error from the core becomes kernelhub._core.CoreError(code, message, missing), code
// being the ErrorCode's stable name ("not_found", "offline_miss", ...) and missing what a not_found
// did not find ("repo", "revision", "version", "file", "lock" or ""); kernelhub/errors.py turns it
// into the exception class the `kernels` package would raise, so callers' except clauses keep working.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "kernelhub/base/internal/hub_names.hpp"
#include "kernelhub/client/progress.hpp"
#include "kernelhub/client/repo_id.hpp"
#include "kernelhub/fetch/internal/fetch.hpp"
#include "kernelhub/fetch/internal/kernel_tree.hpp"
#include "kernelhub/fetch/internal/local_kernels.hpp"
#include "kernelhub/fetch/internal/lockfile.hpp"
#include "kernelhub/fetch/internal/variant_checks.hpp"
#include "kernelhub/resolver/internal/python_environment.hpp"
#include "kernelhub/resolver/internal/torch_version_info.hpp"
#include "kernels_words.hpp"
#include "same_build.hpp"

namespace py = pybind11;

namespace kernelhub::python {
namespace {

// Set once, when the module is initialised (with the GIL held).
PyObject* core_error_type = nullptr;

// Raises kernelhub._core.CoreError(code, message, missing). Needs the GIL.
[[noreturn]] void raise_core_error(const Error& error) {
  py::tuple args = py::make_tuple(std::string(to_string(error.code)), kernels_words::message(error),
                                  std::string(to_string(error.missing)));
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

// This interpreter as the `kernels` package sees it when it selects (its compat.py and
// variants.py): its version, whether it is free-threaded, whether `mlx` and `tvm_ffi` can be
// imported (importlib.util.find_spec, as compat.py asks), and the tvm_ffi version. kernels imports
// tvm_ffi for its __version__; here the package's _version.py, where that comes from, is read
// (resolver/python_environment.hpp): the import cost a warm get_kernel 35 ms of 61, for every repo,
// tvm-ffi variants or not. Read once (as compat.py does), taking the GIL for it: it is called from
// work that runs without it.
const resolver::PythonRuntime& this_python() {
  static const resolver::PythonRuntime runtime = [] {
    resolver::PythonRuntime python{{PY_MAJOR_VERSION, PY_MINOR_VERSION}, false, false, std::nullopt};
#ifdef Py_GIL_DISABLED
    python.free_threaded = true;
#endif
    py::gil_scoped_acquire gil;
    try {
      const py::object find_spec = py::module_::import("importlib.util").attr("find_spec");
      python.mlx = !find_spec("mlx").is_none();
      const py::object tvm_ffi = find_spec("tvm_ffi");
      if (!tvm_ffi.is_none()) {
        const py::object locations = tvm_ffi.attr("submodule_search_locations");
        if (!locations.is_none() && py::len(locations) > 0) {
          const std::string package = py::str(locations[py::int_(0)]);
          python.tvm_ffi = resolver::tvm_ffi_package_version(package);
        }
      }
    } catch (const py::error_already_set&) {
      // A package whose spec cannot be read is one kernels could not use either.
    }
    return python;
  }();
  return runtime;
}

// The environment the `kernels` package would see from this interpreter: the torch it imported,
// this machine, this Python, and `backend` when the caller names one ("cpu", "cuda", ...).
Result<resolver::Environment> python_environment(const EnvironmentSource& env, const resolver::TorchRuntime& torch,
                                                 const std::optional<std::string>& backend) {
  auto environment = resolver::Environment::detect(torch, env, this_python());
  if (!environment) return unexpected(environment.error());
  return with_backend(*std::move(environment), backend);  // "cpu", or the backend torch was built for
}

// A download's progress, handed to a Python callable as ("start", label, total_bytes, files),
// ("update", bytes), ("retry", message) and ("close",). Bytes are gathered between calls so that Python runs at most
// ten times a second; an exception in the callable stops the reports, never the download.
// Created and destroyed with the GIL held; its events come with the GIL released (downloads run
// without it), from the download loop's thread or under the lock parallel downloads share.
class PythonProgress final : public client::ProgressSink {
 public:
  explicit PythonProgress(py::object callback) : callback_(std::move(callback)) {}

  void start(const std::string& label, std::uint64_t total_bytes, int files) override {
    pending_ = 0;
    last_ = std::chrono::steady_clock::now();
    report("start", label, total_bytes, files);
  }
  void add(std::uint64_t bytes) override {
    pending_ += bytes;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    flush();
  }
  void finish() override {
    flush();
    report("close");
  }
  void retry(const std::string& message) override {
    flush();
    report("retry", message);
  }

 private:
  void flush() {
    if (pending_ == 0) return;
    report("update", pending_);
    pending_ = 0;
  }
  template <typename... Args>
  void report(Args&&... args) {
    if (failed_) return;
    py::gil_scoped_acquire gil;
    try {
      callback_(std::forward<Args>(args)...);
    } catch (py::error_already_set& e) {
      e.discard_as_unraisable("kernelhub download progress");
      failed_ = true;
    }
  }

  py::object callback_;
  std::uint64_t pending_ = 0;
  std::chrono::steady_clock::time_point last_{};
  bool failed_ = false;
};

// What one Python call asks for: the request, the torch and the backend its environment is built
// from, and where download progress goes.
struct Call {
  FetchRequest request;
  resolver::TorchRuntime torch;
  std::optional<std::string> backend;
  client::ProgressSink* progress = nullptr;

  Result<FetchContext> context(const EnvironmentSource& env) const {
    KH_ASSIGN_OR_RETURN(resolver::Environment environment, python_environment(env, torch, backend));
    return FetchContext{std::move(environment), env, nullptr, progress};
  }
};

// The sink for a call's `progress` argument (a callable, or None for no reports).
std::optional<PythonProgress> progress_sink(const py::object& progress) {
  if (progress.is_none()) return std::nullopt;
  return PythonProgress(progress);
}

// What a loader of kernels decides besides the revision: whether it fits CUDA variants to the
// GPUs (`check_arch`), and whether UNSTABLE_KERNELS_ALL_LATEST applies to it (kernels' loaders
// resolve through the resolver that honours it; install_kernel and get_kernel_variants do not).
struct Checks {
  bool check_arch = true;
  bool honour_all_latest = false;
};

// A kernels-style request. A Python process imports the variant as a module, so pure-Python
// variants (noarch, universal) qualify and no op library is needed; errors about the request
// itself, and the variant checks' (variant_checks.hpp), are in the kernels package's words.
Call make_call(std::optional<std::string> revision, std::optional<int> version, bool offline, bool trust_remote_code,
               std::vector<std::string> trusted_repos, const resolver::TorchRuntime& torch,
               std::optional<std::string> backend, Checks checks) {
  FetchRequest request;
  request.revision = std::move(revision);
  request.version = version;
  request.offline = offline;
  request.trust_remote_code = trust_remote_code;
  request.trusted_repos = std::move(trusted_repos);
  request.loadable = resolver::Loadable::python_process();
  request.blobs_checked_last = true;  // kernels' digest check speaks first
  request.check_arch = checks.check_arch;
  request.honour_all_latest = checks.honour_all_latest;
  return Call{std::move(request), torch, std::move(backend)};
}

// A fetched kernel, with the kernels it depends on (kernel_tree.hpp), and where it came from: a
// Hub repo (the module gets a RepoInfo) or a directory.
struct Fetched {
  KernelTree tree;
  bool from_hub = false;
  bool pinned = false;  // asked for by its full commit: immutable, so Python may keep the module
};

// Where the request's source is a Hub repo, fetch it; the revision as asked says whether it was pinned.
Result<Fetched> fetch_from_hub(Call call, const std::string& repo_id, const EnvironmentSource& env) {
  KH_ASSIGN_OR_RETURN(call.request.source, client::RepoId::parse(repo_id));
  KH_ASSIGN_OR_RETURN(FetchContext ctx, call.context(env));
  KH_ASSIGN_OR_RETURN(KernelTree tree, fetch_kernel_tree(call.request, ctx));
  const bool pinned = call.request.revision == tree.root().fetched.revision;
  return Fetched{std::move(tree), true, pinned};
}

// `standing_for`: the repo a LOCAL_KERNELS directory was chosen for (kernel_tree.hpp).
Result<Fetched> fetch_from_dir(Call call, const std::filesystem::path& dir, const EnvironmentSource& env,
                               std::optional<KernelDependency> standing_for = std::nullopt) {
  call.request.source = dir;
  KH_ASSIGN_OR_RETURN(FetchContext ctx, call.context(env));
  KH_ASSIGN_OR_RETURN(KernelTree tree, fetch_kernel_tree(call.request, ctx, std::move(standing_for)));
  return Fetched{std::move(tree), false, false};
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
  out["kernels_minver"] = metadata.kernels_minver ? py::object(py::str(*metadata.kernels_minver)) : py::none();
  py::dict backend;
  backend["type"] = metadata.backend;
  if (!metadata.archs.empty()) backend["archs"] = metadata.archs;
  out["backend"] = backend;
  out["build_layout"] = std::string(to_string(metadata.build_layout));
  return out;
}

// One kernel of a tree and, under "dependencies", the kernels it depends on (each with its
// "repo_id"), to be imported first.
// A load's warnings, in kernels' words (kernelhub/_warnings.py says them).
std::vector<std::string> warnings_to_python(const std::vector<Warning>& warnings) {
  std::vector<std::string> said;
  said.reserve(warnings.size());
  for (const Warning& warning : warnings) said.push_back(kernels_words::message(warning));
  return said;
}

py::dict node_to_python(const KernelTree& tree, std::size_t index) {
  const KernelTreeNode& node = tree.nodes[index];
  py::dict out;
  out["repo_id"] = node.name;
  out["path"] = node.fetched.path.string();
  out["variant"] = node.fetched.variant;
  out["revision"] = node.fetched.revision;
  out["from_hub"] = node.fetched.revision != "local";
  out["metadata"] = metadata_to_python(node.fetched.metadata);
  out["metadata_json"] = node.fetched.metadata.raw;
  out["warnings"] = warnings_to_python(node.fetched.warnings);
  py::list dependencies;
  for (std::size_t d : node.dependencies) dependencies.append(node_to_python(tree, d));
  out["dependencies"] = dependencies;
  return out;
}

py::dict fetched_to_python(const Fetched& fetched) {
  const FetchedVariant& variant = fetched.tree.root().fetched;
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
  out["metadata_json"] = variant.metadata.raw;  // empty for a variant older than metadata.json
  out["decisions"] = decisions_to_python(variant.decisions);
  out["warnings"] = warnings_to_python(variant.warnings);
  out["timings"] = timings;
  out["dependencies"] = node_to_python(fetched.tree, fetched.tree.nodes.size() - 1)["dependencies"];
  out["fallbacks"] = variant.fallbacks;
  return out;
}

// kernels' get_kernel up to the import (and, with `local_kernels` false, its install_kernel): the
// revision-or-version rule, then the directory LOCAL_KERNELS names for the repo, else the Hub.
// install_kernel, like kernels', neither reads LOCAL_KERNELS nor honours UNSTABLE_KERNELS_ALL_LATEST.
py::dict fetch_kernel(const std::string& repo_id, std::optional<std::string> revision, std::optional<int> version,
                      std::optional<std::string> backend, bool offline, bool trust_remote_code,
                      std::vector<std::string> trusted_repos, const resolver::TorchRuntime& torch, bool local_kernels,
                      bool check_arch, const py::object& progress) {
  Call call = make_call(std::move(revision), version, offline, trust_remote_code, std::move(trusted_repos), torch,
                        std::move(backend), {.check_arch = check_arch, .honour_all_latest = local_kernels});
  std::optional<PythonProgress> sink = progress_sink(progress);
  call.progress = sink ? &*sink : nullptr;
  return fetched_to_python(without_gil<Fetched>([&]() -> Result<Fetched> {
    KH_RETURN_IF_ERROR(require_revision_or_version(call.request.revision, call.request.version));
    const EnvironmentSource env = process_environment();
    if (local_kernels) {
      KH_ASSIGN_OR_RETURN(auto dir, local_kernel_dir(repo_id, env));
      if (dir) {
        KernelDependency standing_for{repo_id, call.request.version, call.request.revision};
        return fetch_from_dir(std::move(call), *dir, env, std::move(standing_for));
      }
    }
    return fetch_from_hub(std::move(call), repo_id, env);
  }));
}

// kernels' get_local_kernel up to the import: the best variant under `path` (or `path` itself).
py::dict fetch_local(const std::string& path, std::optional<std::string> backend, const resolver::TorchRuntime& torch,
                     bool check_arch) {
  Call call = make_call({}, {}, false, false, {}, torch, std::move(backend), {.check_arch = check_arch});
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
  return lock.lock_of(repo_id, lockfile ? *lockfile : lock_source);
}

// The commit a lock pins `repo_id` at (a locked layer repository needs it before it loads).
std::string locked_commit(const std::string& repo_id, std::optional<std::string> lockfile,
                          std::optional<std::string> lock_json, const std::string& lock_source) {
  return without_gil<KernelLock>([&] { return lock_entry(repo_id, lockfile, lock_json, lock_source); }).commit;
}

// kernels' load_kernel and get_locked_kernel up to the import: the variant at the commit a lock
// pins, and each kernel it depends on at the commit the same lock pins for it. A lock file is read
// by the fetch, which also checks the variant against the hashes kernelhub.lock beside it records;
// a lock from package metadata is parsed here and used the same way.
py::dict fetch_locked(const std::string& repo_id, std::optional<std::string> lockfile,
                      std::optional<std::string> lock_json, const std::string& lock_source,
                      std::optional<std::string> backend, bool offline, bool trust_remote_code,
                      std::vector<std::string> trusted_repos, const resolver::TorchRuntime& torch, bool check_arch,
                      const py::object& progress) {
  Call call = make_call({}, {}, offline, trust_remote_code, std::move(trusted_repos), torch, std::move(backend),
                        {.check_arch = check_arch, .honour_all_latest = true});
  std::optional<PythonProgress> sink = progress_sink(progress);
  call.progress = sink ? &*sink : nullptr;
  return fetched_to_python(without_gil<Fetched>([&]() -> Result<Fetched> {
    if (lockfile) {
      call.request.lockfile = std::filesystem::path(*lockfile);
    } else if (lock_json) {
      KH_ASSIGN_OR_RETURN(LockFile lock, LockFile::parse(*lock_json, lock_source));
      call.request.lock = std::make_shared<const LockFile>(std::move(lock));
      call.request.lock_source = lock_source;
    } else {
      return unexpected(ErrorCode::kInvalidArgument, "neither a lock file nor its text");
    }
    auto fetched = fetch_from_hub(std::move(call), repo_id, process_environment());
    if (fetched) fetched->pinned = false;  // asked for by its lock, not by a commit
    return fetched;
  }));
}

// Whether the kernel and every kernel it depends on resolved; `missing` lists the codes that mean
// "no kernel here" rather than an error to raise.
Result<bool> resolved(const Result<KernelTree>& tree, std::initializer_list<ErrorCode> missing) {
  if (tree) return true;
  for (ErrorCode code : missing) {
    if (tree.error().code == code) return false;
  }
  return unexpected(tree.error());
}

// kernels' has_kernel: whether a variant of the repo (or of the directory LOCAL_KERNELS names for
// it) runs here, and one of every kernel it depends on; nothing is downloaded but the listings and
// the chosen variants' metadata.json (kernel_tree.hpp, metadata only). The publisher trust check of
// a load comes first. No variant that fits, an offline cache miss and a missing local directory
// are `False`.
bool has_kernel(const std::string& repo_id, std::optional<std::string> revision, std::optional<int> version,
                std::optional<std::string> backend, bool trust_remote_code, std::vector<std::string> trusted_repos,
                const resolver::TorchRuntime& torch, bool check_arch) {
  Call call = make_call(std::move(revision), version, false, trust_remote_code, std::move(trusted_repos), torch,
                        std::move(backend), {.check_arch = check_arch, .honour_all_latest = true});
  call.request.metadata_only = true;
  return without_gil<bool>([&]() -> Result<bool> {
    KH_RETURN_IF_ERROR(require_revision_or_version(call.request.revision, call.request.version));
    const EnvironmentSource env = process_environment();
    KH_ASSIGN_OR_RETURN(auto dir, local_kernel_dir(repo_id, env));
    KH_ASSIGN_OR_RETURN(FetchContext ctx, call.context(env));
    if (dir) {
      call.request.source = *dir;
      const KernelDependency standing_for{repo_id, call.request.version, call.request.revision};
      return resolved(fetch_kernel_tree(call.request, ctx, standing_for),
                      {ErrorCode::kNotFound, ErrorCode::kNoCompatibleVariant, ErrorCode::kOfflineMiss});
    }
    KH_ASSIGN_OR_RETURN(call.request.source, client::RepoId::parse(repo_id));
    return resolved(fetch_kernel_tree(call.request, ctx), {ErrorCode::kNoCompatibleVariant, ErrorCode::kOfflineMiss});
  });
}

// kernels' get_kernel_variants: every variant of the repo at the revision, best first, each as
// (name, accepted, reason).
py::list kernel_variants(const std::string& repo_id, std::optional<std::string> revision, std::optional<int> version,
                         std::optional<std::string> backend, const resolver::TorchRuntime& torch) {
  Call call = make_call(std::move(revision), version, false, false, {}, torch, std::move(backend), {});
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

// A variant name as resolver::Variant::parse reads it (resolver/variant.hpp), for the Python side's
// objects of kernels' shape (kernelhub/_variants.py); None when the name does not parse. Keys:
// "framework" (torch, torch-stable-abi, tvm-ffi, torch-noarch, mlx-noarch, sdk), "legacy",
// "framework_version" ("M.m" or None), "cxx11_abi" (True, False or None), "backend" (a kind name,
// "cpu", "cuda", ..., or None), "backend_version" ("M.m" or None), "noarch_backend" (the name as
// written, or None), "python_version" ("M.m" or None for variants with no compiled parts),
// "python_abi" ("abi3" or "abi3t"), "cpu" and "os" (or None).
py::object parse_variant(const std::string& name) {
  auto parsed = resolver::Variant::parse(name);
  if (!parsed) return py::none();
  const resolver::Variant& v = *parsed;
  const auto version = [](const std::optional<resolver::Version>& version) -> py::object {
    return version ? py::object(py::str(version->to_string())) : py::none();
  };
  static constexpr const char* kFrameworks[] = {"torch",        "torch-stable-abi", "tvm-ffi",
                                                "torch-noarch", "mlx-noarch",       "sdk"};
  py::dict out;
  out["framework"] = kFrameworks[static_cast<int>(v.framework)];
  out["legacy"] = v.form == resolver::NameForm::kLegacy;
  out["framework_version"] = v.is_arch() ? version(v.framework_version) : py::none();
  out["cxx11_abi"] = v.cxx11_abi ? py::object(py::bool_(*v.cxx11_abi)) : py::none();
  const bool has_backend = v.is_arch() || (v.framework == resolver::Framework::kSdk && v.compiled && !v.any_backend);
  out["backend"] = has_backend ? py::object(py::str(std::string(v.backend.kind_name()))) : py::none();
  out["backend_version"] = has_backend ? version(v.backend.version) : py::none();
  out["noarch_backend"] = v.noarch_backend ? py::object(py::str(*v.noarch_backend)) : py::none();
  out["python_version"] = v.compiled ? version(v.python.min) : py::none();
  out["python_abi"] = v.python.abi3t ? "abi3t" : "abi3";
  out["cpu"] = v.compiled ? py::object(py::str(v.cpu)) : py::none();
  out["os"] = v.compiled ? py::object(py::str(v.os)) : py::none();
  return out;
}

// metadata.json's text, read as get_kernel reads it (kernels' Metadata.read_from_file).
py::dict parse_metadata(const std::string& text) {
  return metadata_to_python(value_or_raise(Metadata::parse(text)));
}

// kernels' same-build check of an import whose metadata `id` is already imported: raises (integrity
// mismatch) unless the build at `variant_path` is the one loaded (kernels_words/same_build.hpp).
void check_same_build(const std::string& loaded_metadata_json, const std::string& metadata_json,
                      const std::string& variant_path) {
  const Metadata loaded = value_or_raise(Metadata::parse(loaded_metadata_json));
  const Metadata candidate = value_or_raise(Metadata::parse(metadata_json));
  if (const Status same = kernels_words::check_same_build(loaded, candidate, variant_path); !same) {
    raise_core_error(same.error());
  }
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

// Every environment variable kernelhub reads (base/environment_variables.hpp): the Python package
// reads its own through python/src/kernelhub/_environment.py, which refuses a name not listed here.
py::list environment_variables() {
  py::list out;
  for (const EnvironmentVariable& v : kernelhub::environment_variables()) {
    py::dict entry;
    entry["name"] = std::string(v.name);
    entry["meaning"] = std::string(v.meaning);
    entry["default"] = std::string(v.default_value);
    entry["read_by"] = std::string(v.read_by);
    entry["secret"] = v.secret;
    out.append(std::move(entry));
  }
  return out;
}

// The Hub's repo id rules (base/hub_names.hpp), as a verdict: None for a valid id, else why not.
// `kernel`: as a kernel repo's id (client::RepoId), which also needs an org.
std::optional<std::string> repo_id_error(const std::string& repo_id, bool kernel) {
  if (kernel) {
    if (auto repo = client::RepoId::parse(repo_id); !repo) return repo.error().message;
  } else if (auto parts = hub_names::split_repo_id(repo_id); !parts) {
    return parts.error().message;
  }
  return std::nullopt;
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
      .def(py::init([](std::optional<std::string> version, std::optional<bool> cxx11_abi,
                       std::optional<std::string> cuda, std::optional<std::string> hip, std::optional<std::string> xpu,
                       std::optional<std::string> rocm) {
             // No version: no torch in the process, so (as in kernels) only variants that need no
             // torch build qualify.
             if (!version) return resolver::TorchRuntime{};
             return value_or_raise(resolver::TorchVersionInfo{*version, cuda, hip, xpu, cxx11_abi, rocm}.runtime());
           }),
           py::kw_only(), py::arg("version") = py::none(), py::arg("cxx11_abi") = py::none(),
           py::arg("cuda") = py::none(), py::arg("hip") = py::none(), py::arg("xpu") = py::none(),
           py::arg("rocm") = py::none(),
           "From torch.__version__, torch.compiled_with_cxx11_abi() and torch.version.cuda / hip / xpu / rocm; "
           "no version: no torch.")
      .def("__repr__", &describe);
  const auto no_torch = resolver::TorchRuntime{};

  m.def("fetch_kernel", &fetch_kernel, py::arg("repo_id"), py::kw_only(), py::arg("revision") = py::none(),
        py::arg("version") = py::none(), py::arg("backend") = py::none(), py::arg("offline") = false,
        py::arg("trust_remote_code") = false, py::arg("trusted_repos") = std::vector<std::string>{},
        py::arg("torch") = no_torch, py::arg("local_kernels") = true, py::arg("check_arch") = true,
        py::arg("progress") = py::none(),
        "get_kernel (and, with local_kernels=False, install_kernel) up to the import: the variant that runs here, "
        "from the directory LOCAL_KERNELS names or the Hub, downloaded and verified; `progress(event, *args)` "
        "hears of a download.");
  m.def("fetch_local", &fetch_local, py::arg("path"), py::arg("backend") = py::none(), py::kw_only(),
        py::arg("torch") = no_torch, py::arg("check_arch") = true,
        "get_local_kernel up to the import: the best variant under a directory (or the directory itself), verified.");
  m.def(
      "fetch_locked", &fetch_locked, py::arg("repo_id"), py::kw_only(), py::arg("lockfile") = py::none(),
      py::arg("lock_json") = py::none(), py::arg("lock_source") = "", py::arg("backend") = py::none(),
      py::arg("offline") = false, py::arg("trust_remote_code") = false,
      py::arg("trusted_repos") = std::vector<std::string>{}, py::arg("torch") = no_torch, py::arg("check_arch") = true,
      py::arg("progress") = py::none(),
      "load_kernel and get_locked_kernel up to the import: the variant at the commit a lock file (or its text) pins.");
  m.def("locked_commit", &locked_commit, py::arg("repo_id"), py::kw_only(), py::arg("lockfile") = py::none(),
        py::arg("lock_json") = py::none(), py::arg("lock_source") = "",
        "The commit a lock file (or its text) pins the repo at.");
  m.def("has_kernel", &has_kernel, py::arg("repo_id"), py::kw_only(), py::arg("revision") = py::none(),
        py::arg("version") = py::none(), py::arg("backend") = py::none(), py::arg("trust_remote_code") = false,
        py::arg("trusted_repos") = std::vector<std::string>{}, py::arg("torch") = no_torch,
        py::arg("check_arch") = true, "Whether a variant of the repo (or of its LOCAL_KERNELS directory) runs here.");
  m.def("kernel_variants", &kernel_variants, py::arg("repo_id"), py::kw_only(), py::arg("revision") = py::none(),
        py::arg("version") = py::none(), py::arg("backend") = py::none(), py::arg("torch") = no_torch,
        "Every variant of a Hub repo at a revision, best first, as (name, accepted, reason).");
  m.def("parse_variant", &parse_variant, py::arg("name"),
        "A build variant's name as selection reads it (a dict of its parts), or None when it does not parse.");
  m.def("parse_metadata", &parse_metadata, py::arg("text"), "metadata.json's fields, as get_kernel reads them.");
  m.def("check_same_build", &check_same_build, py::arg("loaded_metadata_json"), py::arg("metadata_json"),
        py::arg("variant_path"),
        "Raises unless a build whose metadata id is already imported is the build imported (their digests agree).");
  m.attr("KERNELS_COMPATIBLE_VERSION") = std::string(kernelhub::kKernelsCompatibleVersion);
  m.def("repo_id_error", &repo_id_error, py::arg("repo_id"), py::kw_only(), py::arg("kernel") = false,
        "None when repo_id is a valid Hub repo id (huggingface_hub's validate_repo_id; with kernel=True, also "
        "under an org), else why it is not.");
  m.def("environment_variables", &environment_variables,
        "Every environment variable kernelhub reads: name, meaning, default, read_by, secret.");
  m.def("environment", &environment, py::arg("backend") = py::none(), py::kw_only(), py::arg("torch") = no_torch,
        "This process as variant selection sees it, with the torch given.");
}
