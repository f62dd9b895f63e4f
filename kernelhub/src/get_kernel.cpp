#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>

#include "kernelhub/base/file_digests.hpp"
#include "kernelhub/client/hub_client.hpp"
#include "kernelhub/client/repo_id.hpp"
#include "kernelhub/kernelhub.hpp"
#include "kernelhub/loader/fatbin.hpp"
#include "kernelhub/loader/torch_libraries.hpp"
#include "kernelhub/loader/torch_runtime.hpp"
#include "kernelhub/local_kernels.hpp"
#include "kernelhub/lockfile.hpp"
#include "kernelhub/publisher_trust.hpp"
#include "kernelhub/resolver/gpu_fit_step.hpp"
#include "kernelhub/signing/verify.hpp"

namespace kernelhub {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The op namespace from `_ops.py` (`ops = torch.ops._name_cpu_uid`), for variants without
// metadata.json (kernels built before kernel-builder wrote one).
std::optional<std::string> namespace_from_ops_py(const std::filesystem::path& dir) {
  std::ifstream in(dir / "_ops.py");
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  static const std::regex ops_re(R"(torch\.ops\.([A-Za-z_][A-Za-z0-9_]*))");
  std::smatch m;
  const std::string s = text.str();
  if (std::regex_search(s, m, ops_re)) return m[1].str();
  return std::nullopt;
}

// The op library of a variant: `<id>.abi3.so` (kernel-builder's name), else the only `.so` in the
// directory, else the only one in `<pkg>/` (the layout before Nov 2025).
Result<std::filesystem::path> find_library(const std::filesystem::path& dir, const std::string& ns) {
  for (const char* suffix : {".abi3.so", ".so"}) {
    const auto named = dir / (ns + suffix);
    if (std::filesystem::is_regular_file(named)) return named;
  }
  std::vector<std::filesystem::path> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".so") found.push_back(entry.path());
    if (entry.is_directory()) {
      for (const auto& inner : std::filesystem::directory_iterator(entry.path(), ec)) {
        if (inner.is_regular_file() && inner.path().extension() == ".so") found.push_back(inner.path());
      }
    }
  }
  if (found.size() == 1) return found.front();
  if (found.empty()) {
    return unexpected(ErrorCode::kNotFound, "variant directory `" + dir.string() + "` has no op library (`" + ns +
                                                ".abi3.so` or another `.so`)");
  }
  return unexpected(ErrorCode::kCorruptFile, "variant directory `" + dir.string() +
                                                 "` has several `.so` files and none is named `" + ns + ".abi3.so`");
}

std::vector<std::string> subdirectories(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_directory(ec)) out.push_back(entry.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool any_parses(const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(),
                     [](const std::string& n) { return resolver::Variant::parse(n).has_value(); });
}

// What device code a variant directory on disk carries: the fatbinary of its op library (after
// download, trust the bytes). None when it cannot be read: select()'s decision then stands and
// the pre-flight reports what is wrong with the file.
std::optional<std::vector<resolver::CudaTarget>> device_code_on_disk(const std::filesystem::path& dir) {
  auto metadata = Metadata::read(dir);
  if (!metadata) return std::nullopt;
  auto library = find_library(dir, metadata->id);
  if (!library) return std::nullopt;
  auto entries = loader::Fatbin::read(*library);
  if (!entries) return std::nullopt;
  return loader::targets_of(*entries);
}

// Rejects accepted CUDA variants that cannot run on the visible GPUs (resolver/gpu_fit_step.hpp).
void fit_to_gpus(std::vector<resolver::Decision>& decisions, const resolver::Environment& environment,
                 const resolver::DeviceCodeLookup& code_of) {
  if (environment.gpus.empty()) return;  // nothing to fit to; select() decided
  resolver::apply_gpu_fit(decisions, environment, code_of);
}

// Reads and verifies a variant directory: metadata.json (or the namespace from _ops.py), its
// digest, and (for a C++ process) that an op library is there. Nothing is loaded.
Result<FetchedVariant> verify_variant_dir(const std::filesystem::path& dir, std::string variant, std::string revision,
                                          std::vector<resolver::Decision> decisions, bool for_python,
                                          LoadTimings timings = {}, FileDigests* shared_digests = nullptr) {
  FileDigests own_digests;
  FileDigests& digests = shared_digests != nullptr ? *shared_digests : own_digests;
  const auto verify_start = std::chrono::steady_clock::now();
  auto metadata = Metadata::read(dir);
  if (!metadata) {
    if (metadata.error().code != ErrorCode::kNotFound) return unexpected(metadata.error());
    auto ns = namespace_from_ops_py(dir);
    if (!ns) {
      return unexpected(ErrorCode::kNotFound,
                        "variant directory `" + dir.string() +
                            "` has neither metadata.json nor _ops.py, so its op namespace is unknown");
    }
    Metadata fallback;
    fallback.id = *ns;
    fallback.name = dir.filename().string();
    metadata = std::move(fallback);
  }
  if (!metadata->digest.empty()) KH_RETURN_IF_ERROR(verify_digest(dir, *metadata, &digests));
  if (!for_python) KH_RETURN_IF_ERROR(find_library(dir, metadata->id));
  timings.verify += seconds_since(verify_start);
  timings.bytes_hashed = digests.bytes_read();
  return FetchedVariant{dir,    std::move(variant), std::move(revision), std::move(*metadata), std::move(decisions),
                        timings};
}

}  // namespace

Result<resolver::Environment> with_backend(resolver::Environment environment,
                                           const std::optional<std::string>& backend) {
  if (!backend) return environment;
  auto parsed = resolver::Backend::parse_environment(*backend);
  if (!parsed && *backend == environment.torch_backend.kind_name()) parsed = environment.torch_backend;
  if (!parsed) return unexpected(parsed.error());
  if (parsed->kind == resolver::BackendKind::kCuda && !parsed->version) parsed = environment.torch_backend;
  environment.backend = *parsed;
  environment.backend_reason = "requested by the caller";
  return environment;
}

namespace {

resolver::Environment environment_or_raise(const EnvironmentSource& env, const std::optional<std::string>& backend) {
  auto environment = with_backend(detect_environment(env), backend);
  if (!environment) raise_for(environment.error());
  return *std::move(environment);
}

}  // namespace

resolver::Environment detect_environment(const EnvironmentSource& env) {
  auto environment = resolver::Environment::detect(loader::torch_runtime(), env);
  if (!environment) raise_for(environment.error());
  return *environment;
}

Result<Kernel> load_fetched_variant(FetchedVariant fetched, const EnvironmentSource& env) {
  KH_ASSIGN_OR_RETURN(std::filesystem::path library_path, find_library(fetched.path, fetched.metadata.id));
  // A CUDA kernel needs torch's CUDA half in the process, as `import torch` would provide it.
  const auto parsed = resolver::Variant::parse(fetched.variant);
  if (fetched.metadata.backend == "cuda" || (parsed && parsed->backend.kind == resolver::BackendKind::kCuda)) {
    KH_RETURN_IF_ERROR(loader::ensure_torch_cuda_loaded());
  }
  LoadTimings timings = fetched.timings;
  const auto load_start = std::chrono::steady_clock::now();
  auto library = loader::OpLibrary::open(library_path, fetched.metadata.id, env);
  if (!library) return unexpected(library.error());
  timings.load = seconds_since(load_start);  // includes the ELF pre-flight, done inside open()
  Kernel kernel(*library, std::move(fetched.metadata), std::move(fetched.variant), std::move(fetched.revision),
                fetched.path, std::move(fetched.decisions));
  kernel.set_timings(timings);
  return kernel;
}

Result<FetchedVariant> fetch_local_variant(const std::filesystem::path& path, const resolver::Environment& environment,
                                           bool for_python) {
  KH_ASSIGN_OR_RETURN(VariantDecisions resolved,
                      local_variant_decisions(path, environment, {.native_only = !for_python}));
  std::error_code ec;
  if (!std::any_of(resolved.decisions.begin(), resolved.decisions.end(),
                   [](const resolver::Decision& d) { return d.variant.has_value(); })) {
    // `path` itself may be a variant directory.
    if (std::filesystem::exists(path / "metadata.json", ec) || std::filesystem::exists(path / "_ops.py", ec)) {
      return verify_variant_dir(path, path.filename().string(), "local", {}, for_python);
    }
    return unexpected(ErrorCode::kNotFound,
                      "Could not find kernel in `" + path.string() +
                          "`: no build variant directories (e.g. build/torch215-cxx11-cpu-x86_64-linux/) "
                          "in it or in its build/ subdirectory");
  }
  const resolver::Decision* best = resolver::chosen(resolved.decisions);
  if (best == nullptr) {
    return unexpected(ErrorCode::kNoCompatibleVariant, "Cannot find a build variant for this system in `" +
                                                           path.string() + "`:\n\n" +
                                                           resolver::format_trace(resolved.decisions));
  }
  const std::string name = best->name;
  return verify_variant_dir(resolved.root / name, name, "local", std::move(resolved.decisions), for_python);
}

Result<Kernel> load_local_kernel(const std::filesystem::path& path, const resolver::Environment& environment,
                                 const EnvironmentSource& env) {
  KH_ASSIGN_OR_RETURN(FetchedVariant fetched, fetch_local_variant(path, environment));
  return load_fetched_variant(std::move(fetched), env);
}

Kernel get_local_kernel(const std::filesystem::path& path, std::optional<std::string> backend) {
  const EnvironmentSource env = process_environment();
  const resolver::Environment environment = environment_or_raise(env, backend);
  auto kernel = load_local_kernel(path, environment, env);
  if (!kernel) raise_for(kernel.error());
  return *std::move(kernel);
}

namespace {

Result<client::Settings> settings_for(const GetKernelOptions& options, const EnvironmentSource& env) {
  KH_ASSIGN_OR_RETURN(client::Settings settings, client::Settings::from_env(env));
  if (options.offline) settings.offline = true;
  return settings;
}

Result<VariantDecisions> decisions_from_hub(const client::HubClient& hub, const client::RepoId& repo,
                                            const GetKernelOptions& options, const resolver::Environment& environment,
                                            const resolver::SelectOptions& select_options) {
  constexpr auto kType = RepoType::kKernel;

  VariantDecisions out;
  if (options.revision) {
    out.revision = *options.revision;
  } else if (options.version) {
    out.revision = "v" + std::to_string(*options.version);
  } else {
    // As the kernels package: no implicit `main`; say which versions exist and what to write.
    auto versions = hub.list_versions(repo, kType);
    std::string listed = "none";
    std::string example = "1";
    if (versions && !versions->empty()) {
      listed.clear();
      for (const auto& v : *versions) listed += (listed.empty() ? "" : ", ") + v;
      example = versions->back().substr(1);
    }
    return unexpected(ErrorCode::kInvalidArgument,
                      "a kernel version or revision must be given for `" + repo.to_string() +
                          "`; available versions: " + listed + ". Write get_kernel(\"" + repo.to_string() +
                          "\", {.version = " + example + "}) (CLI: --version " + example + ")");
  }
  auto commit = hub.resolve_revision(repo, kType, out.revision);
  if (!commit) {
    if (commit.error().code == ErrorCode::kNotFound && options.version) {
      auto versions = hub.list_versions(repo, kType);
      if (versions) {
        std::string listed;
        for (const auto& v : *versions) listed += (listed.empty() ? "" : ", ") + v;
        return unexpected(
            Error{ErrorCode::kNotFound,
                  "Version " + std::to_string(*options.version) + " of `" + repo.to_string() +
                      "` not found, available versions: " + (listed.empty() ? std::string("none") : listed),
                  Missing::kVersion});
      }
    }
    return unexpected(commit.error());
  }
  out.commit = *commit;
  KH_ASSIGN_OR_RETURN(std::vector<std::string> names, hub.list_variants(repo, kType, out.commit));
  out.decisions = resolver::select(names, environment, select_options);
  // Before download, metadata.json `backend.archs` says what each CUDA variant was built for
  // (one small cached file per candidate, only when there are GPUs to fit).
  fit_to_gpus(out.decisions, environment,
              [&](const resolver::Decision& d) -> std::optional<std::vector<resolver::CudaTarget>> {
                auto file = hub.download_file(repo, kType, out.commit, "build/" + d.name + "/metadata.json");
                if (!file) return std::nullopt;
                auto metadata = Metadata::read(file->path.parent_path());
                if (!metadata || metadata->archs.empty()) return std::nullopt;
                auto targets = resolver::parse_cuda_archs(metadata->archs);
                return targets ? std::optional(*targets) : std::nullopt;
              });
  return out;
}

}  // namespace

Result<VariantDecisions> hub_variant_decisions(const client::RepoId& repo, const GetKernelOptions& options,
                                               const resolver::Environment& environment, const EnvironmentSource& env,
                                               const resolver::SelectOptions& select_options) {
  KH_ASSIGN_OR_RETURN(client::Settings settings, settings_for(options, env));
  return decisions_from_hub(client::HubClient(std::move(settings)), repo, options, environment, select_options);
}

Result<VariantDecisions> local_variant_decisions(const std::filesystem::path& dir,
                                                 const resolver::Environment& environment,
                                                 const resolver::SelectOptions& select_options) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return unexpected(ErrorCode::kNotFound, "kernel directory `" + dir.string() + "` does not exist");
  }
  VariantDecisions out;
  out.revision = "local";
  out.root = dir;
  std::vector<std::string> names = subdirectories(dir);
  if (!any_parses(names) && std::filesystem::is_directory(dir / "build", ec)) {
    out.root = dir / "build";
    names = subdirectories(out.root);
  }
  out.decisions = resolver::select(names, environment, select_options);
  fit_to_gpus(out.decisions, environment,
              [&](const resolver::Decision& d) { return device_code_on_disk(out.root / d.name); });
  return out;
}

namespace {

// The lock entry of `repo` in `options.lockfile`, when there is one.
Result<std::optional<KernelLock>> lock_for(const client::RepoId& repo, const GetKernelOptions& options) {
  if (!options.lockfile) return std::optional<KernelLock>();
  if (options.revision || options.version) {
    return unexpected(ErrorCode::kInvalidArgument, "`" + repo.to_string() +
                                                       "`: a locked load takes its commit from the lock file; "
                                                       "do not also give a revision or version");
  }
  KH_ASSIGN_OR_RETURN(LockFile lock, LockFile::read(*options.lockfile));
  const KernelLock* entry = lock.find(repo.to_string());
  if (entry == nullptr) {
    return unexpected(ErrorCode::kNotFound, "`" + repo.to_string() + "` is not locked in `" +
                                                options.lockfile->string() +
                                                "`. Add it to [tool.kernels.dependencies] in pyproject.toml (or "
                                                "[dependencies] in kernels.toml) and run `kernelhub lock`");
  }
  return std::optional<KernelLock>(*entry);
}

}  // namespace

Result<FetchedVariant> fetch_hub_variant(const client::RepoId& repo, const GetKernelOptions& options,
                                         const resolver::Environment& environment, const EnvironmentSource& env) {
  const auto resolve_start = std::chrono::steady_clock::now();
  KH_ASSIGN_OR_RETURN(std::optional<KernelLock> locked, lock_for(repo, options));
  GetKernelOptions effective = options;
  if (locked) effective.revision = locked->commit;
  KH_ASSIGN_OR_RETURN(client::Settings settings, settings_for(options, env));
  client::Settings cache_only = settings;
  cache_only.offline = true;
  const client::HubClient hub(std::move(settings));
  const client::HubClient cache(std::move(cache_only));

  KH_ASSIGN_OR_RETURN(VariantDecisions resolved,
                      decisions_from_hub(hub, repo, effective, environment, {.native_only = !options.for_python}));
  const resolver::Decision* best = resolver::chosen(resolved.decisions);
  if (best == nullptr) {
    return unexpected(ErrorCode::kNoCompatibleVariant, "Cannot find a build variant for this system in `" +
                                                           repo.to_string() + "` (revision: " + resolved.revision +
                                                           "):\n\n" + resolver::format_trace(resolved.decisions));
  }
  const std::string name = best->name;
  const std::string* locked_hash = nullptr;
  if (locked && !locked->variants.empty()) {
    const auto it = locked->variants.find(name);
    if (it == locked->variants.end()) {
      std::string listed;
      for (const auto& [variant, hash] : locked->variants) listed += "\n  " + variant;
      return unexpected(ErrorCode::kNoCompatibleVariant, "`" + repo.to_string() + "`: the variant for this machine, `" +
                                                             name + "`, is not among the variants locked in `" +
                                                             options.lockfile->string() + "`:" + listed);
    }
    locked_hash = &it->second;
  }
  LoadTimings timings;
  timings.resolve = seconds_since(resolve_start);
  // A pinned commit already in the cache was trusted when it was downloaded, and is immutable:
  // it loads with no request at all. Anything else is checked before a byte is downloaded.
  auto snapshot = resolved.revision == resolved.commit
                      ? cache.download_variant(repo, RepoType::kKernel, resolved.commit, name)
                      : Result<client::Snapshot>(unexpected(ErrorCode::kOfflineMiss, "not pinned"));
  if (!snapshot) {
    KH_RETURN_IF_ERROR(check_publisher_trust(hub, repo, options.trust_remote_code, options.trusted_repos, env));
    snapshot = hub.download_variant(repo, RepoType::kKernel, resolved.commit, name);
    if (!snapshot) return unexpected(snapshot.error());
  }
  timings.download = snapshot->seconds;
  timings.requests = snapshot->requests;
  // The signature, the lock entry and metadata.json's digest read the same files: once, shared.
  FileDigests digests;
  // Before anything in the download is parsed: its signature, when a key is trusted or required.
  KH_RETURN_IF_ERROR(signing::check_variant(
      snapshot->path, signing::ExpectedVariant::for_revision(repo.to_string(), resolved.revision, name),
      options.require_signature, env, &digests));
  if (locked_hash != nullptr) {
    // The listing the download used is cached by now (trees/<commit>.json): no request.
    const auto verify_start = std::chrono::steady_clock::now();
    KH_ASSIGN_OR_RETURN(client::RepoTree tree, cache.tree(repo, RepoType::kKernel, resolved.commit));
    auto checked = verify_variant_lock(snapshot->path, tree, name, *locked_hash, &digests);
    if (!checked) return unexpected(checked.error().with_context("locked load of `" + repo.to_string() + "`"));
    timings.verify = seconds_since(verify_start);
  }
  // After download, trust the bytes: the fatbinary must agree that this variant runs here.
  if (!environment.gpus.empty()) {
    std::vector<resolver::Decision> check{*best};
    resolver::apply_gpu_fit(check, environment,
                            [&](const resolver::Decision&) { return device_code_on_disk(snapshot->path); });
    if (!check.front().accepted) {
      return unexpected(ErrorCode::kNoCompatibleVariant, "`" + repo.to_string() + "` variant `" + name + "` (commit " +
                                                             resolved.commit +
                                                             ") cannot run on this machine: " + check.front().reason);
    }
  }
  return verify_variant_dir(snapshot->path, name, resolved.commit, std::move(resolved.decisions), options.for_python,
                            timings, &digests);
}

Result<Kernel> load_hub_kernel(const client::RepoId& repo, const GetKernelOptions& options,
                               const resolver::Environment& environment, const EnvironmentSource& env) {
  KH_ASSIGN_OR_RETURN(FetchedVariant fetched, fetch_hub_variant(repo, options, environment, env));
  return load_fetched_variant(std::move(fetched), env);
}

Kernel get_kernel(std::string_view repo_id, const GetKernelOptions& options) {
  const EnvironmentSource env = process_environment();
  auto repo = client::RepoId::parse(repo_id);
  if (!repo) raise_for(repo.error());
  if (options.revision && options.version) {
    raise_for(Error{ErrorCode::kInvalidArgument,
                    "give either a revision or a version for `" + repo->to_string() + "`, not both"});
  }
  if (auto local = env("LOCAL_KERNELS")) {
    auto map = parse_local_kernels(*local);
    if (!map) raise_for(map.error());
    if (auto it = map->find(repo->to_string()); it != map->end()) {
      const resolver::Environment environment = environment_or_raise(env, options.backend);
      auto kernel = load_local_kernel(it->second, environment, env);
      if (!kernel) raise_for(kernel.error().with_context("LOCAL_KERNELS entry for `" + repo->to_string() + "`"));
      return *std::move(kernel);
    }
  }
  const resolver::Environment environment = environment_or_raise(env, options.backend);
  auto kernel = load_hub_kernel(*repo, options, environment, env);
  if (!kernel) raise_for(kernel.error());
  return *std::move(kernel);
}

}  // namespace kernelhub
