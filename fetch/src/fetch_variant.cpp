#include <algorithm>
#include <chrono>
#include <functional>
#include <map>

#include "kernelhub/base/internal/file_digests.hpp"
#include "kernelhub/binary_format/internal/elf_identity.hpp"
#include "kernelhub/binary_format/internal/library_image.hpp"
#include "kernelhub/client/internal/cache_layout.hpp"
#include "kernelhub/client/internal/cached_blob.hpp"
#include "kernelhub/client/internal/hub_client.hpp"
#include "kernelhub/fetch/internal/fetch.hpp"
#include "kernelhub/fetch/internal/lockfile.hpp"
#include "kernelhub/fetch/internal/problem.hpp"
#include "kernelhub/fetch/internal/publisher_trust.hpp"
#include "kernelhub/fetch/internal/resolve_commit.hpp"
#include "kernelhub/fetch/internal/session.hpp"
#include "kernelhub/fetch/internal/signature_check.hpp"
#include "kernelhub/fetch/internal/variant_checks.hpp"
#include "kernelhub/fetch/internal/verification_stamps.hpp"
#include "kernelhub/fetch/internal/zip_layout.hpp"
#include "kernelhub/resolver/internal/closest_miss.hpp"
#include "kernelhub/resolver/internal/gpu_fit_step.hpp"
#include "kernelhub/resolver/variant.hpp"
#include "kernelhub/signing/internal/signature_file.hpp"
#include "request_lock.hpp"
#include "variant_dir.hpp"

namespace kernelhub {

namespace {

constexpr auto kKernelRepo = RepoType::kKernel;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

const Session& session_of(const FetchContext& ctx) {
  return ctx.session ? *ctx.session : Session::process_default();
}

// A client for one fetch, on its Session's connection and listings.
Result<client::HubClient> hub_client_for(const FetchRequest& request, const FetchContext& ctx) {
  const Session& session = session_of(ctx);
  KH_ASSIGN_OR_RETURN(client::Settings settings, session.settings(ctx.env));
  if (request.offline) settings.offline = true;
  return session.hub_client(std::move(settings));
}

// The signature configuration of a fetch (signature_check.hpp).
Result<std::shared_ptr<const SignatureSettings>> signature_settings_for(const FetchRequest& request,
                                                                        const FetchContext& ctx) {
  KH_ASSIGN_OR_RETURN(SignatureSettings settings,
                      SignatureSettings::from_environment(ctx.env, request.require_signature));
  return std::make_shared<const SignatureSettings>(std::move(settings));
}

// The publisher trust check, with the answers of the fetch's Session.
Status require_trusted_publisher(const client::HubClient& hub, const client::RepoId& repo, const FetchRequest& request,
                                 const FetchContext& ctx) {
  return check_publisher_trust(hub, repo, request.trust_remote_code, request.trusted_repos, ctx.env,
                               session_of(ctx).trusted_publishers());
}

// No variant of `what` runs here: the closest miss first, then the whole trace (closest_miss.hpp).
Error no_variant_here(const FetchRequest& request, const std::string& what, std::vector<resolver::Decision> decisions,
                      const resolver::Environment& environment) {
  std::string message = resolver::no_variant_message(what, decisions, environment, request.loadable);
  return problem_error(ErrorCode::kNoCompatibleVariant, std::move(message), NoVariantHere{what, std::move(decisions)});
}

// Why revision or v<N> did not resolve: a version the repo (or, offline, the cache) does not
// have, and offline, a ref or version the cache does not hold (each with its Problem). Anything
// else as it came.
Error not_resolved(const client::HubClient& hub, const client::RepoId& repo, const FetchRequest& request,
                   const Error& error) {
  const bool offline = error.code == ErrorCode::kOfflineMiss;
  if (error.code != ErrorCode::kNotFound && !offline) return error;
  const std::string id = repo.to_string();
  if (request.version) {
    auto versions = hub.list_versions(repo, kKernelRepo);
    if (versions && (!versions->empty() || !offline)) {
      VersionNotFound missing{id, *request.version, std::move(*versions)};
      std::string message = missing.message();
      return problem_error(ErrorCode::kNotFound, std::move(message), std::move(missing), Missing::kVersion);
    }
  }
  if (!offline) return error;
  const client::CacheLayout layout(hub.settings().cache_dir(kKernelRepo), kKernelRepo, repo);
  NotCachedOffline missing{id, request.version, request.revision.value_or(""), layout.cache_root(), layout.list_refs()};
  std::string message = missing.message("{.revision = \"<commit>\"}");
  return problem_error(ErrorCode::kOfflineMiss, std::move(message), std::move(missing));
}

// revision or v<N> → commit; a missing or absent version, or none given, says so with its Problem.
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
    NoVersionGiven missing{repo.to_string(), versions ? std::optional(std::move(*versions)) : std::nullopt};
    std::string message = missing.message("Write get_kernel(\"" + repo.to_string() +
                                          "\", {.version = " + missing.example_version() + "})");
    return unexpected(problem_error(ErrorCode::kInvalidArgument, std::move(message), std::move(missing)));
  }
  auto commit = hub.resolve_revision(repo, kKernelRepo, out.revision);
  if (!commit) return unexpected(not_resolved(hub, repo, request, commit.error()));
  out.commit = *commit;
  return out;
}

// UNSTABLE_KERNELS_ALL_LATEST, as kernels' LatestHubResolver reads it: the repo's highest v<N>
// (from the refs API, or offline the refs/ of the cache), whatever the request names. nullopt when
// the request does not honour it or it is not set. Errors: kInvalidArgument (no v<N> on the Hub),
// kOfflineMiss (none in the cache), in the kernels package's words; those of list_versions.
Result<std::optional<int>> all_latest_version(const client::HubClient& hub, const client::RepoId& repo,
                                              const FetchRequest& request, const EnvironmentSource& env) {
  if (!request.honour_all_latest) return std::optional<int>();
  if (!is_truthy(env(env_vars::kUnstableKernelsAllLatest))) return std::optional<int>();
  auto versions = hub.list_versions(repo, kKernelRepo);
  const bool offline = hub.settings().offline;
  if ((versions && versions->empty()) || (!versions && versions.error().code == ErrorCode::kOfflineMiss)) {
    return unexpected(offline ? ErrorCode::kOfflineMiss : ErrorCode::kInvalidArgument,
                      "Cannot load the latest version of '" + repo.to_string() +
                          "': no numbered versions are available " + (offline ? "in the local cache" : "on the Hub") +
                          ". UNSTABLE_KERNELS_ALL_LATEST requires a numbered version.");
  }
  if (!versions) return unexpected(versions.error());
  return std::optional<int>(std::stoi(versions->back().substr(1)));  // "v<N>", sorted by number
}

// What a request asked for, in a warning: "version 1", "revision main", "the lock's commit".
std::string asked_for(const FetchRequest& request) {
  if (request.lockfile) return "the commit locked in `" + request.lockfile->string() + "`";
  if (request.revision) return "revision " + *request.revision;
  return request.version ? "version " + std::to_string(*request.version) : "no version";
}
// What a CUDA variant's device code is, or why it cannot be known.
using DeviceCodeOf = std::function<Result<std::vector<resolver::CudaTarget>>(const resolver::Decision&)>;

// Rejects accepted CUDA variants that cannot run on the visible GPUs (resolver/gpu_fit_step.hpp).
// One whose code cannot be known stays as select() decided, and its trace line says why the fit
// was not checked.
void fit_to_gpus(std::vector<resolver::Decision>& decisions, const resolver::Environment& environment,
                 const DeviceCodeOf& code_of) {
  if (environment.gpus.empty()) return;  // nothing to fit to; select() decided
  std::map<std::string, std::string> not_checked;
  resolver::apply_gpu_fit(decisions, environment,
                          [&](const resolver::Decision& d) -> std::optional<std::vector<resolver::CudaTarget>> {
                            auto code = code_of(d);
                            if (code) return std::move(*code);
                            not_checked[d.name] = code.error().message;
                            return std::nullopt;
                          });
  for (auto& d : decisions) {
    auto* compatible = std::get_if<resolver::reason::Compatible>(&d.reason);
    const auto why = not_checked.find(d.name);
    if (compatible != nullptr && !compatible->fit && why != not_checked.end())
      compatible->fit_not_checked = why->second;
  }
}

// The CUDA targets metadata.json `backend.archs` names, or why there are none to use.
Result<std::vector<resolver::CudaTarget>> archs_of(const Result<Metadata>& metadata) {
  if (!metadata) return unexpected(metadata.error().code, "metadata.json: " + metadata.error().message);
  if (metadata->archs.empty()) return unexpected(ErrorCode::kCorruptFile, "metadata.json names no CUDA archs");
  auto targets = resolver::parse_cuda_archs(metadata->archs);
  if (!targets) return unexpected(targets.error().code, "metadata.json archs: " + targets.error().message);
  return std::move(*targets);
}

bool tree_has(const client::RepoTree& tree, const std::string& path) {
  return std::binary_search(tree.files.begin(), tree.files.end(), path, [](const auto& a, const auto& b) {
    if constexpr (std::is_same_v<std::decay_t<decltype(a)>, client::TreeEntry>) {
      return a.path < b;
    } else {
      return a < b.path;
    }
  });
}

// metadata.json of a variant whose other files are not downloaded (a metadata-only fetch, the GPU
// fit of a CUDA candidate), with its bundle, and the signature checked before it is parsed
// (signature_check.hpp). Returns the folder they are in. Errors: the download's, a bundle that
// does not verify, and a refusal where a signature is required.
Result<std::pair<std::filesystem::path, SignatureVerdict>> signed_metadata(
    const client::HubClient& hub, const client::RepoId& repo, const client::RepoTree& tree, const std::string& commit,
    const std::string& revision, const std::string& variant, const SignatureSettings& settings,
    const FetchRequest& request, const FetchContext& ctx) {
  const std::string folder = "build/" + variant + "/";
  if (tree_has(tree, folder + std::string(kSigstoreBundleName))) {
    KH_RETURN_IF_ERROR(hub.download_file(repo, kKernelRepo, commit, folder + std::string(kSigstoreBundleName)));
  }
  KH_ASSIGN_OR_RETURN(client::Snapshot file, hub.download_file(repo, kKernelRepo, commit, folder + "metadata.json"));
  const std::filesystem::path dir = file.path.parent_path();
  KH_ASSIGN_OR_RETURN(SignatureVerdict verdict, check_signature(dir, repo.to_string(), variant, revision, settings,
                                                                session_of(ctx).signature_records(ctx.env), nullptr));
  KH_RETURN_IF_ERROR(refuse_unless_accepted(verdict, repo.to_string(), variant));
  return std::pair(dir, std::move(verdict));
}

// The decisions for a Hub repo at a resolved commit, from its one listing `tree`. Before
// download, metadata.json `backend.archs` says what each CUDA variant was built for (one small
// cached file per candidate, only when there are GPUs to fit).
void decide_from_tree(const client::HubClient& hub, const client::RepoId& repo, const client::RepoTree& tree,
                      const FetchRequest& request, const FetchContext& ctx, const SignatureSettings& settings,
                      VariantDecisions& out) {
  const resolver::Environment& environment = ctx.environment;
  out.decisions = resolver::select(tree.subfolders("build"), environment, request.loadable);
  if (!request.check_arch) return;
  fit_to_gpus(
      out.decisions, environment, [&](const resolver::Decision& d) -> Result<std::vector<resolver::CudaTarget>> {
        auto signed_dir = signed_metadata(hub, repo, tree, out.commit, out.revision, d.name, settings, request, ctx);
        if (!signed_dir) return unexpected(signed_dir.error().with_context("metadata.json"));
        return archs_of(Metadata::read(signed_dir->first));
      });
}

// The lock entry of `repo` in the request's lock, when there is one.
Result<std::optional<KernelLock>> lock_for(const client::RepoId& repo, const FetchRequest& request) {
  if (!has_lock(request)) return std::optional<KernelLock>();
  if (request.revision || request.version) {
    return unexpected(ErrorCode::kInvalidArgument, "`" + repo.to_string() +
                                                       "`: a locked load takes its commit from the lock file; "
                                                       "do not also give a revision or version");
  }
  KH_ASSIGN_OR_RETURN(const RequestLock lock, request_lock(request));
  KH_ASSIGN_OR_RETURN(KernelLock entry, request_lock_entry(lock, request, repo.to_string()));
  return std::optional<KernelLock>(std::move(entry));
}

// The op library of a variant is built for the cpu the variant's name says, read from its ELF header
// alone (binary_format/elf_identity.hpp): a mislabelled build (an x86_64 library in an ...-aarch64-linux
// folder, or the reverse) or a library cut short is refused before anything of it is loaded, in
// every path (get_kernel, tvm_ffi::get_kernel, the CLI, the Python binding).
Status check_library_machine(const std::filesystem::path& library, const std::string& variant) {
  auto parsed = resolver::Variant::parse(variant);
  if (!parsed || !parsed->is_arch()) return {};
  KH_ASSIGN_OR_RETURN(const binary_format::ElfIdentity elf, binary_format::ElfIdentity::read(library));
  return binary_format::check_variant_machine(library, elf, variant, parsed->cpu);
}

// Reads and verifies a variant directory once: metadata.json (or the namespace from _ops.py), its
// digest, a zip layout's package archive (zip_layout.hpp), and for a native load the op library
// (beside the archive in that layout), whose ELF and device code are read (once) when
// the GPUs must be fitted. `digests` carries what the signature and lock checks already hashed.
// `label` names the variant in messages; `image` is its library when the selection already read it.
Result<FetchedVariant> verify_variant_dir(const std::filesystem::path& dir, std::string variant, std::string revision,
                                          std::vector<resolver::Decision> decisions, const FetchRequest& request,
                                          const resolver::Environment& environment, FileDigests& digests,
                                          LoadTimings timings, const std::string& label,
                                          std::optional<binary_format::LibraryImage> image = std::nullopt) {
  const auto verify_start = std::chrono::steady_clock::now();
  KH_ASSIGN_OR_RETURN(Metadata metadata, read_variant_metadata(dir));
  std::vector<Warning> warnings;
  KH_RETURN_IF_ERROR(check_variant(dir, metadata, variant, &digests, warnings));
  KH_RETURN_IF_ERROR(check_zip_package(dir, metadata));
  FetchedVariant out{
      dir, std::move(variant), std::move(revision), std::move(metadata), std::move(decisions), {}, {}, {}, {}, {}};
  out.warnings = std::move(warnings);
  if (request.loadable.python) {
    // Python imports the library itself: its machine is still checked first (a pure-Python
    // variant has none).
    if (auto library = find_op_library(dir, out.metadata.id)) {
      KH_RETURN_IF_ERROR(check_library_machine(*library, out.variant));
    }
  } else {
    KH_ASSIGN_OR_RETURN(std::filesystem::path library, find_op_library(dir, out.metadata.id));
    KH_RETURN_IF_ERROR(check_library_machine(library, out.variant));
    out.library = library;
    // After download, trust the bytes: the fatbinary must agree that this variant runs here.
    if (!environment.gpus.empty() && request.check_arch) {
      if (!image) {
        if (auto read = binary_format::LibraryImage::read(library)) image = std::move(*read);
      }
      std::vector<resolver::Decision> check;
      if (const auto* best = resolver::chosen(out.decisions)) check.push_back(*best);
      if (!check.empty()) {
        resolver::apply_gpu_fit(check, environment, [&](const resolver::Decision&) {
          return image ? std::optional(binary_format::targets_of(image->device_code)) : std::nullopt;
        });
        if (!check.front().accepted()) {
          return unexpected(ErrorCode::kNoCompatibleVariant,
                            label + " cannot run on this machine: " + resolver::to_string(check.front().reason));
        }
      }
      if (image) out.image = std::make_shared<const binary_format::LibraryImage>(std::move(*image));
    }
  }
  timings.verify += seconds_since(verify_start);
  timings.bytes_hashed = digests.bytes_read();
  out.timings = timings;
  return out;
}

// A variant as a metadata-only fetch sees it: its metadata.json, nothing verified.
Result<FetchedVariant> metadata_of(const std::filesystem::path& dir, std::string variant, std::string revision,
                                   std::vector<resolver::Decision> decisions) {
  KH_ASSIGN_OR_RETURN(Metadata metadata, read_variant_metadata(dir));
  return FetchedVariant{
      dir, std::move(variant), std::move(revision), std::move(metadata), std::move(decisions), {}, {}, {}, {}, {}};
}

// Each file of the variant read from the cache still has the content its blob is named for (what
// this call downloaded was checked as it streamed in, and `digests` remembers it): a file that
// changed in the cache after it was verified is named by its blob, with the command that repairs
// it, before the signature, lock or digest checks could blame the build for it.
Status check_cached_blobs(const client::Snapshot& snapshot, const client::RepoTree& tree, const client::RepoId& repo,
                          const std::string& variant, FileDigests& digests) {
  for (const std::string& path : snapshot.files) {
    const auto entry = std::lower_bound(tree.files.begin(), tree.files.end(), path,
                                        [](const client::TreeEntry& e, const std::string& p) { return e.path < p; });
    if (entry == tree.files.end() || entry->path != path) continue;
    const std::filesystem::path file = snapshot.root / path;
    KH_ASSIGN_OR_RETURN(std::optional<std::string> found, client::blob_content_changed(file, entry->etag(), &digests));
    if (!found) continue;
    std::error_code ec;
    const std::filesystem::path blob = std::filesystem::canonical(file, ec);
    const std::string what = "`" + path + "` of `" + repo.to_string() + "` (commit " + snapshot.commit + ")";
    return unexpected(ErrorCode::kIntegrityMismatch, client::changed_in_cache({path, ec ? file : blob, *found}, what) +
                                                         ". Repair it with: kernelhub download " + repo.to_string() +
                                                         " --revision " + snapshot.commit + " --variant " + variant);
  }
  return {};
}

// `images`, when given, keeps the op libraries the GPU fit read, by variant name.
Result<VariantDecisions> local_decisions(const std::filesystem::path& dir, const FetchRequest& request,
                                         const resolver::Environment& environment,
                                         std::map<std::string, binary_format::LibraryImage>* images = nullptr) {
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
  out.decisions = resolver::select(names, environment, request.loadable);
  if (!request.check_arch) return out;
  fit_to_gpus(out.decisions, environment,
              [&](const resolver::Decision& d) -> Result<std::vector<resolver::CudaTarget>> {
                KH_ASSIGN_OR_RETURN(Metadata metadata, read_variant_metadata(out.root / d.name));
                KH_ASSIGN_OR_RETURN(std::filesystem::path library, find_op_library(out.root / d.name, metadata.id));
                KH_ASSIGN_OR_RETURN(binary_format::LibraryImage image, binary_format::LibraryImage::read(library));
                auto targets = binary_format::targets_of(image.device_code);
                if (images != nullptr) images->insert_or_assign(d.name, std::move(image));
                return targets;
              });
  return out;
}

Result<FetchedVariant> fetch_local(const std::filesystem::path& path, const FetchRequest& request,
                                   const FetchContext& ctx) {
  const auto start = std::chrono::steady_clock::now();
  std::map<std::string, binary_format::LibraryImage> images;
  KH_ASSIGN_OR_RETURN(VariantDecisions resolved, local_decisions(path, request, ctx.environment, &images));
  LoadTimings timings;
  timings.resolve = seconds_since(start);
  const VerificationStamps stamps = session_of(ctx).verification_stamps(ctx.env);
  FileDigests digests;
  std::error_code ec;
  if (!std::any_of(resolved.decisions.begin(), resolved.decisions.end(),
                   [](const resolver::Decision& d) { return d.variant.has_value(); })) {
    // `path` itself may be a variant directory.
    if (std::filesystem::exists(path / "metadata.json", ec) || std::filesystem::exists(path / "_ops.py", ec)) {
      if (request.metadata_only) return metadata_of(path, path.filename().string(), "local", {});
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
    return unexpected(no_variant_here(request, "`" + path.string() + "`", resolved.decisions, ctx.environment));
  }
  const std::string name = best->name;
  const auto dir = resolved.root / name;
  if (request.metadata_only) return metadata_of(dir, name, "local", std::move(resolved.decisions));
  stamps.seed(dir, digests);
  std::optional<binary_format::LibraryImage> image;
  if (auto it = images.find(name); it != images.end()) image = std::move(it->second);
  auto fetched = verify_variant_dir(dir, name, "local", std::move(resolved.decisions), request, ctx.environment,
                                    digests, timings, "variant `" + dir.string() + "`", std::move(image));
  if (fetched) stamps.record(dir, digests);
  return fetched;
}

// What a Hub fetch decides before any file of a variant: the commit (the lock's pin, unless
// UNSTABLE_KERNELS_ALL_LATEST overrides it), the listing at that commit, and the decisions.
struct HubDecision {
  std::optional<KernelLock> locked;  // the lock's entry for the repo; none when the latest version overrides it
  std::optional<int> latest;         // the version UNSTABLE_KERNELS_ALL_LATEST chose, when it applies
  VariantDecisions resolved;
  client::RepoTree tree;
};

// `check_trust`: check the publisher once the revision resolved (a repo that does not exist is
// then not found, whoever publishes it), before the listing is read.
Result<HubDecision> decide_on_hub(const client::HubClient& hub, const client::RepoId& repo, const FetchRequest& request,
                                  const FetchContext& ctx, const SignatureSettings& settings, bool check_trust) {
  HubDecision out;
  KH_ASSIGN_OR_RETURN(out.locked, lock_for(repo, request));
  FetchRequest effective = request;
  if (out.locked) effective.revision = out.locked->commit;
  KH_ASSIGN_OR_RETURN(out.latest, all_latest_version(hub, repo, request, ctx.env));
  if (out.latest) {  // the lock's pin (and its variant hashes) and the version asked for give way
    out.locked.reset();
    effective.revision.reset();
    effective.version = *out.latest;
  }
  KH_ASSIGN_OR_RETURN(out.resolved, resolve(hub, repo, effective));
  if (check_trust) {
    KH_RETURN_IF_ERROR(require_trusted_publisher(hub, repo, request, ctx));
  }
  KH_ASSIGN_OR_RETURN(out.tree, hub.tree(repo, kKernelRepo, out.resolved.commit));
  decide_from_tree(hub, repo, out.tree, effective, ctx, settings, out.resolved);
  return out;
}

Result<FetchedVariant> fetch_hub(const client::RepoId& repo, const FetchRequest& request, const FetchContext& ctx) {
  const auto resolve_start = std::chrono::steady_clock::now();
  KH_ASSIGN_OR_RETURN(const client::HubClient hub, hub_client_for(request, ctx));
  // The signature configuration is read before anything else: a malformed signers file or
  // trusted root is an error before a request, not after a download.
  KH_ASSIGN_OR_RETURN(const auto signature_settings, signature_settings_for(request, ctx));
  KH_ASSIGN_OR_RETURN(HubDecision decided,
                      decide_on_hub(hub, repo, request, ctx, *signature_settings, /*check_trust=*/false));
  const std::optional<KernelLock>& locked = decided.locked;
  const std::optional<int>& latest = decided.latest;
  VariantDecisions& resolved = decided.resolved;
  const client::RepoTree& tree = decided.tree;
  const resolver::Decision* best = resolver::chosen(resolved.decisions);
  if (best == nullptr) {
    return unexpected(no_variant_here(request, "`" + repo.to_string() + "` (revision: " + resolved.revision + ")",
                                      resolved.decisions, ctx.environment));
  }
  const std::string name = best->name;
  if (request.metadata_only) {
    KH_RETURN_IF_ERROR(require_trusted_publisher(hub, repo, request, ctx));
    KH_ASSIGN_OR_RETURN(auto signed_dir, signed_metadata(hub, repo, tree, resolved.commit, resolved.revision, name,
                                                         *signature_settings, request, ctx));
    auto fetched = metadata_of(signed_dir.first, name, resolved.commit, std::move(resolved.decisions));
    if (fetched) {
      if (auto warning = signature_warning(signed_dir.second, fetched->metadata, repo.to_string(), name)) {
        fetched->warnings.push_back(std::move(*warning));
      }
    }
    return fetched;
  }
  const std::string* locked_hash = nullptr;
  if (locked && !locked->variants.empty()) {
    const auto it = locked->variants.find(name);
    if (it == locked->variants.end()) {
      std::string listed;
      for (const auto& [variant, hash] : locked->variants) listed += "\n  " + variant;
      return unexpected(ErrorCode::kNoCompatibleVariant,
                        "`" + repo.to_string() + "`: the variant for this machine, `" + name +
                            "`, is not among the variants locked in `" +
                            (request.lockfile ? request.lockfile->string() : request.lock_source) + "`:" + listed);
    }
    locked_hash = &it->second;
  }
  LoadTimings timings;
  timings.resolve = seconds_since(resolve_start);
  // A pinned commit already in the cache was trusted when it was downloaded, and is immutable:
  // it loads with no request at all. Anything else is checked before a byte is downloaded.
  const bool pinned = resolved.revision == resolved.commit;
  // The variant's signature, beside its folder (signing/signature_file.hpp), comes with it.
  client::DownloadOptions options{.progress = ctx.progress, .with_files = {signing::signature_repo_path(name)}};
  client::DownloadOptions cached = options;
  cached.cache_only = true;
  auto snapshot = pinned ? hub.download_variant(repo, kKernelRepo, resolved.commit, name, cached)
                         : Result<client::Snapshot>(unexpected(ErrorCode::kOfflineMiss, "not pinned"));
  if (!snapshot) {
    KH_RETURN_IF_ERROR(require_trusted_publisher(hub, repo, request, ctx));
    snapshot = hub.download_variant(repo, kKernelRepo, resolved.commit, name, options);
    if (!snapshot) return unexpected(snapshot.error());
  }
  timings.download = snapshot->seconds;

  const auto verify_start = std::chrono::steady_clock::now();
  const VerificationStamps stamps = session_of(ctx).verification_stamps(ctx.env);
  FileDigests digests;  // the signature, the lock entry and the digest read the same files: once
  stamps.seed(snapshot->path, digests);
  // What this call downloaded was hashed as it streamed in: those hashes hold while the blobs
  // keep the stamps they have now.
  remember_downloaded(snapshot->downloaded_sha256, digests);
  // kernelhub names the changed blob before a signature, lock or digest check could blame the
  // build for it; in kernels' order its digest check speaks first (below).
  if (!request.blobs_checked_last) KH_RETURN_IF_ERROR(check_cached_blobs(*snapshot, tree, repo, name, digests));
  // Before anything in the download is parsed: its signature (signature_check.hpp).
  KH_ASSIGN_OR_RETURN(const SignatureVerdict signature,
                      check_signature(snapshot->path, repo.to_string(), name, resolved.revision, *signature_settings,
                                      session_of(ctx).signature_records(ctx.env), &digests));
  KH_RETURN_IF_ERROR(refuse_unless_accepted(signature, repo.to_string(), name));
  if (locked_hash != nullptr) {
    auto checked = verify_variant_lock(snapshot->path, tree, name, *locked_hash, &digests);
    if (!checked) return unexpected(checked.error().with_context("locked load of `" + repo.to_string() + "`"));
  }
  timings.verify = seconds_since(verify_start);
  auto fetched = verify_variant_dir(
      snapshot->path, name, resolved.commit, std::move(resolved.decisions), request, ctx.environment, digests, timings,
      "`" + repo.to_string() + "` variant `" + name + "` (commit " + resolved.commit + ")");
  if (!fetched) return fetched;
  if (auto warning = signature_warning(signature, fetched->metadata, repo.to_string(), name)) {
    fetched->warnings.insert(fetched->warnings.begin(), std::move(*warning));
  }
  // A file no digest covers is still held to its blob's name.
  if (request.blobs_checked_last) KH_RETURN_IF_ERROR(check_cached_blobs(*snapshot, tree, repo, name, digests));
  stamps.record(snapshot->path, digests);
  fetched->timings.requests = hub.requests();
  fetched->fallbacks = hub.fallbacks();
  if (latest) {
    fetched->warnings.insert(
        fetched->warnings.begin(),
        Warning{"UNSTABLE_KERNELS_ALL_LATEST is enabled: overriding requested " + asked_for(request) +
                " and any lockfile pin for '" + repo.to_string() + "' with v" + std::to_string(*latest) + " (" +
                resolved.commit + "). Kernel API changes may break your code."});
  }
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
  KH_ASSIGN_OR_RETURN(const client::HubClient hub, hub_client_for(request, ctx));
  KH_ASSIGN_OR_RETURN(const auto signature_settings, signature_settings_for(request, ctx));
  KH_ASSIGN_OR_RETURN(HubDecision decided, decide_on_hub(hub, repo, request, ctx, *signature_settings, check_trust));
  decided.resolved.fallbacks = hub.fallbacks();
  return std::move(decided.resolved);
}

Result<std::string> resolve_commit(const client::HubClient& hub, const client::RepoId& repo,
                                   const FetchRequest& request) {
  KH_ASSIGN_OR_RETURN(VariantDecisions resolved, resolve(hub, repo, request));
  return std::move(resolved.commit);
}

}  // namespace kernelhub
