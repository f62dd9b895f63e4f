#include <chrono>
#include <map>

#include "kernelhub/base/file_digests.hpp"
#include "kernelhub/client/hub_client.hpp"
#include "kernelhub/fetch.hpp"
#include "kernelhub/loader/library_image.hpp"
#include "kernelhub/lockfile.hpp"
#include "kernelhub/publisher_trust.hpp"
#include "kernelhub/resolver/gpu_fit_step.hpp"
#include "kernelhub/signing/verify.hpp"
#include "kernelhub/verification_stamps.hpp"
#include "variant_dir.hpp"

namespace kernelhub {

namespace {

resolver::SelectOptions select_options(const FetchRequest& request) {
  return {
      .native_only = request.native_only, .loads_torch = request.loads_torch, .loads_tvm_ffi = request.loads_tvm_ffi};
}

constexpr auto kKernelRepo = RepoType::kKernel;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Result<client::Settings> settings_for(const FetchRequest& request, const EnvironmentSource& env) {
  KH_ASSIGN_OR_RETURN(client::Settings settings, client::Settings::from_env(env));
  if (request.offline) settings.offline = true;
  return settings;
}

client::HubClient make_client(client::Settings settings, const FetchContext& ctx) {
  return ctx.transport ? client::HubClient(std::move(settings), ctx.transport) : client::HubClient(std::move(settings));
}

std::string join_versions(const std::vector<std::string>& versions) {
  std::string listed;
  for (const auto& v : versions) listed += (listed.empty() ? "" : ", ") + v;
  return listed.empty() ? std::string("none") : listed;
}

// revision or v<N> → commit, with the kernels package's messages for a missing or absent version.
Result<VariantDecisions> resolve(const client::HubClient& hub, const client::RepoId& repo,
                                 const FetchRequest& request) {
  VariantDecisions out;
  if (request.revision) {
    out.revision = *request.revision;
  } else if (request.version) {
    out.revision = "v" + std::to_string(*request.version);
  } else {
    // As the kernels package: no implicit `main`; say which versions exist and what to write.
    auto versions = hub.list_versions(repo, kKernelRepo);
    const std::string example = versions && !versions->empty() ? versions->back().substr(1) : "1";
    return unexpected(ErrorCode::kInvalidArgument,
                      "a kernel version or revision must be given for `" + repo.to_string() +
                          "`; available versions: " + (versions ? join_versions(*versions) : "none") +
                          ". Write get_kernel(\"" + repo.to_string() + "\", {.version = " + example +
                          "}) (CLI: --version " + example + ")");
  }
  auto commit = hub.resolve_revision(repo, kKernelRepo, out.revision);
  if (!commit) {
    if (commit.error().code == ErrorCode::kNotFound && request.version) {
      if (auto versions = hub.list_versions(repo, kKernelRepo)) {
        return unexpected(Error{ErrorCode::kNotFound,
                                "Version " + std::to_string(*request.version) + " of `" + repo.to_string() +
                                    "` not found, available versions: " + join_versions(*versions),
                                Missing::kVersion});
      }
    }
    return unexpected(commit.error());
  }
  out.commit = *commit;
  return out;
}

// Rejects accepted CUDA variants that cannot run on the visible GPUs (resolver/gpu_fit_step.hpp).
void fit_to_gpus(std::vector<resolver::Decision>& decisions, const resolver::Environment& environment,
                 const resolver::DeviceCodeLookup& code_of) {
  if (environment.gpus.empty()) return;  // nothing to fit to; select() decided
  resolver::apply_gpu_fit(decisions, environment, code_of);
}

// The decisions for a Hub repo at a resolved commit, from its one listing `tree`. Before
// download, metadata.json `backend.archs` says what each CUDA variant was built for (one small
// cached file per candidate, only when there are GPUs to fit).
void decide_from_tree(const client::HubClient& hub, const client::RepoId& repo, const client::RepoTree& tree,
                      const FetchRequest& request, const resolver::Environment& environment, VariantDecisions& out) {
  out.decisions = resolver::select(tree.subfolders("build"), environment, select_options(request));
  fit_to_gpus(out.decisions, environment,
              [&](const resolver::Decision& d) -> std::optional<std::vector<resolver::CudaTarget>> {
                auto file = hub.download_file(repo, kKernelRepo, out.commit, "build/" + d.name + "/metadata.json");
                if (!file) return std::nullopt;
                auto metadata = Metadata::read(file->path.parent_path());
                if (!metadata || metadata->archs.empty()) return std::nullopt;
                auto targets = resolver::parse_cuda_archs(metadata->archs);
                return targets ? std::optional(*targets) : std::nullopt;
              });
}

// The lock entry of `repo` in `request.lockfile`, when there is one.
Result<std::optional<KernelLock>> lock_for(const client::RepoId& repo, const FetchRequest& request) {
  if (!request.lockfile) return std::optional<KernelLock>();
  if (request.revision || request.version) {
    return unexpected(ErrorCode::kInvalidArgument, "`" + repo.to_string() +
                                                       "`: a locked load takes its commit from the lock file; "
                                                       "do not also give a revision or version");
  }
  KH_ASSIGN_OR_RETURN(LockFile lock, LockFile::read(*request.lockfile));
  KH_ASSIGN_OR_RETURN(KernelLock entry, lock.lock_of(repo.to_string(), request.lockfile->string(), request.wording));
  return std::optional<KernelLock>(std::move(entry));
}

// Reads and verifies a variant directory once: metadata.json (or the namespace from _ops.py), its
// digest, and for a native load the op library, whose ELF and device code are read (once) when
// the GPUs must be fitted. `digests` carries what the signature and lock checks already hashed.
// `label` names the variant in messages; `image` is its library when the selection already read it.
Result<FetchedVariant> verify_variant_dir(const std::filesystem::path& dir, std::string variant, std::string revision,
                                          std::vector<resolver::Decision> decisions, const FetchRequest& request,
                                          const resolver::Environment& environment, FileDigests& digests,
                                          LoadTimings timings, const std::string& label,
                                          std::optional<loader::LibraryImage> image = std::nullopt) {
  const auto verify_start = std::chrono::steady_clock::now();
  KH_ASSIGN_OR_RETURN(Metadata metadata, read_variant_metadata(dir));
  if (metadata.has_digest) KH_RETURN_IF_ERROR(verify_digest(dir, metadata, &digests));
  FetchedVariant out{dir, std::move(variant), std::move(revision), std::move(metadata), std::move(decisions), {}, {},
                     {}};
  if (request.native_only) {
    KH_ASSIGN_OR_RETURN(std::filesystem::path library, find_op_library(dir, out.metadata.id));
    out.library = library;
    // After download, trust the bytes: the fatbinary must agree that this variant runs here.
    if (!environment.gpus.empty()) {
      if (!image) {
        if (auto read = loader::LibraryImage::read(library)) image = std::move(*read);
      }
      std::vector<resolver::Decision> check;
      if (const auto* best = resolver::chosen(out.decisions)) check.push_back(*best);
      if (!check.empty()) {
        resolver::apply_gpu_fit(check, environment, [&](const resolver::Decision&) {
          return image ? std::optional(loader::targets_of(image->device_code)) : std::nullopt;
        });
        if (!check.front().accepted()) {
          return unexpected(ErrorCode::kNoCompatibleVariant,
                            label + " cannot run on this machine: " + resolver::to_string(check.front().reason));
        }
      }
      out.image = std::move(image);
    }
  }
  timings.verify += seconds_since(verify_start);
  timings.bytes_hashed = digests.bytes_read();
  out.timings = timings;
  return out;
}

// `images`, when given, keeps the op libraries the GPU fit read, by variant name.
Result<VariantDecisions> local_decisions(const std::filesystem::path& dir, const FetchRequest& request,
                                         const resolver::Environment& environment,
                                         std::map<std::string, loader::LibraryImage>* images = nullptr) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return unexpected(ErrorCode::kNotFound, "kernel directory `" + dir.string() + "` does not exist");
  }
  VariantDecisions out;
  out.revision = "local";
  out.root = dir;
  std::vector<std::string> names = subdirectories(dir);
  const auto parses = [](const std::vector<std::string>& list) {
    return std::any_of(list.begin(), list.end(),
                       [](const std::string& n) { return resolver::Variant::parse(n).has_value(); });
  };
  if (!parses(names) && std::filesystem::is_directory(dir / "build", ec)) {
    out.root = dir / "build";
    names = subdirectories(out.root);
  }
  out.decisions = resolver::select(names, environment, select_options(request));
  fit_to_gpus(out.decisions, environment,
              [&](const resolver::Decision& d) -> std::optional<std::vector<resolver::CudaTarget>> {
                auto metadata = read_variant_metadata(out.root / d.name);
                if (!metadata) return std::nullopt;
                auto library = find_op_library(out.root / d.name, metadata->id);
                if (!library) return std::nullopt;
                auto image = loader::LibraryImage::read(*library);
                if (!image) return std::nullopt;
                auto targets = loader::targets_of(image->device_code);
                if (images != nullptr) images->insert_or_assign(d.name, std::move(*image));
                return targets;
              });
  return out;
}

Result<FetchedVariant> fetch_local(const std::filesystem::path& path, const FetchRequest& request,
                                   const FetchContext& ctx) {
  const auto start = std::chrono::steady_clock::now();
  std::map<std::string, loader::LibraryImage> images;
  KH_ASSIGN_OR_RETURN(VariantDecisions resolved, local_decisions(path, request, ctx.environment, &images));
  LoadTimings timings;
  timings.resolve = seconds_since(start);
  const VerificationStamps stamps(VerificationStamps::state_dir_from(ctx.env));
  FileDigests digests;
  std::error_code ec;
  if (!std::any_of(resolved.decisions.begin(), resolved.decisions.end(),
                   [](const resolver::Decision& d) { return d.variant.has_value(); })) {
    // `path` itself may be a variant directory.
    if (std::filesystem::exists(path / "metadata.json", ec) || std::filesystem::exists(path / "_ops.py", ec)) {
      stamps.seed(path, digests);
      auto fetched = verify_variant_dir(path, path.filename().string(), "local", {}, request, ctx.environment, digests,
                                        timings, "variant `" + path.string() + "`");
      if (fetched) stamps.record(path, digests);
      return fetched;
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
  const auto dir = resolved.root / name;
  stamps.seed(dir, digests);
  std::optional<loader::LibraryImage> image;
  if (auto it = images.find(name); it != images.end()) image = std::move(it->second);
  auto fetched = verify_variant_dir(dir, name, "local", std::move(resolved.decisions), request, ctx.environment,
                                    digests, timings, "variant `" + dir.string() + "`", std::move(image));
  if (fetched) stamps.record(dir, digests);
  return fetched;
}

Result<FetchedVariant> fetch_hub(const client::RepoId& repo, const FetchRequest& request, const FetchContext& ctx) {
  const auto resolve_start = std::chrono::steady_clock::now();
  KH_ASSIGN_OR_RETURN(std::optional<KernelLock> locked, lock_for(repo, request));
  FetchRequest effective = request;
  if (locked) effective.revision = locked->commit;
  KH_ASSIGN_OR_RETURN(client::Settings settings, settings_for(request, ctx.env));
  const client::HubClient hub = make_client(std::move(settings), ctx);

  KH_ASSIGN_OR_RETURN(VariantDecisions resolved, resolve(hub, repo, effective));
  KH_ASSIGN_OR_RETURN(client::RepoTree tree, hub.tree(repo, kKernelRepo, resolved.commit));
  decide_from_tree(hub, repo, tree, effective, ctx.environment, resolved);
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
                                                             request.lockfile->string() + "`:" + listed);
    }
    locked_hash = &it->second;
  }
  LoadTimings timings;
  timings.resolve = seconds_since(resolve_start);
  // A pinned commit already in the cache was trusted when it was downloaded, and is immutable:
  // it loads with no request at all. Anything else is checked before a byte is downloaded.
  const bool pinned = resolved.revision == resolved.commit;
  auto snapshot = pinned ? hub.download_variant(repo, kKernelRepo, resolved.commit, name, {.cache_only = true})
                         : Result<client::Snapshot>(unexpected(ErrorCode::kOfflineMiss, "not pinned"));
  if (!snapshot) {
    KH_RETURN_IF_ERROR(check_publisher_trust(hub, repo, request.trust_remote_code, request.trusted_repos, ctx.env));
    snapshot = hub.download_variant(repo, kKernelRepo, resolved.commit, name);
    if (!snapshot) return unexpected(snapshot.error());
  }
  timings.download = snapshot->seconds;
  timings.requests = snapshot->requests;

  const auto verify_start = std::chrono::steady_clock::now();
  const VerificationStamps stamps(VerificationStamps::state_dir_from(ctx.env));
  FileDigests digests;  // the signature, the lock entry and the digest read the same files: once
  stamps.seed(snapshot->path, digests);
  // What this call downloaded was hashed as it streamed in: those hashes hold while the blobs
  // keep the stamps they have now.
  for (const auto& [blob, hash] : snapshot->downloaded_sha256) {
    std::error_code ec;
    const auto canonical = std::filesystem::canonical(blob, ec);
    if (ec) continue;
    if (auto stamp = FileStamp::of(canonical); stamp && stamp->size == hash.size) {
      digests.remember(canonical, {*stamp, hash});
    }
  }
  // Before anything in the download is parsed: its signature, when a key is trusted or required.
  KH_RETURN_IF_ERROR(signing::check_variant(
      snapshot->path, signing::ExpectedVariant::for_revision(repo.to_string(), resolved.revision, name),
      request.require_signature, ctx.env, &digests));
  if (locked_hash != nullptr) {
    auto checked = verify_variant_lock(snapshot->path, tree, name, *locked_hash, &digests);
    if (!checked) return unexpected(checked.error().with_context("locked load of `" + repo.to_string() + "`"));
  }
  timings.verify = seconds_since(verify_start);
  auto fetched = verify_variant_dir(
      snapshot->path, name, resolved.commit, std::move(resolved.decisions), request, ctx.environment, digests, timings,
      "`" + repo.to_string() + "` variant `" + name + "` (commit " + resolved.commit + ")");
  if (!fetched) return fetched;
  stamps.record(snapshot->path, digests);
  return fetched;
}

}  // namespace

Status require_revision_or_version(const std::optional<std::string>& revision, const std::optional<int>& version) {
  if (revision && version) {
    return unexpected(ErrorCode::kInvalidArgument, "Only one of `revision` or `version` must be specified.");
  }
  if (!revision && !version) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "A kernel version or revision must be specified. Use `version=<major>` for a stable kernel API "
                      "version or `revision=<branch/tag/commit>` for an explicit Hub revision. See: "
                      "https://huggingface.co/docs/kernels/migration");
  }
  return {};
}

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

Result<FetchedVariant> fetch_variant(const FetchRequest& request, const FetchContext& ctx) {
  if (const auto* repo = std::get_if<client::RepoId>(&request.source)) return fetch_hub(*repo, request, ctx);
  return fetch_local(std::get<std::filesystem::path>(request.source), request, ctx);
}

Result<VariantDecisions> variant_decisions(const FetchRequest& request, const FetchContext& ctx, bool check_trust) {
  if (const auto* dir = std::get_if<std::filesystem::path>(&request.source)) {
    return local_decisions(*dir, request, ctx.environment);
  }
  const client::RepoId& repo = std::get<client::RepoId>(request.source);
  KH_ASSIGN_OR_RETURN(client::Settings settings, settings_for(request, ctx.env));
  const client::HubClient hub = make_client(std::move(settings), ctx);
  if (check_trust) {
    KH_RETURN_IF_ERROR(check_publisher_trust(hub, repo, request.trust_remote_code, request.trusted_repos, ctx.env));
  }
  KH_ASSIGN_OR_RETURN(VariantDecisions resolved, resolve(hub, repo, request));
  KH_ASSIGN_OR_RETURN(client::RepoTree tree, hub.tree(repo, kKernelRepo, resolved.commit));
  decide_from_tree(hub, repo, tree, request, ctx.environment, resolved);
  return resolved;
}

}  // namespace kernelhub
