#include "build_dir_check.hpp"

#include <algorithm>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/internal/atomic_file.hpp"
#include "kernelhub/binary_format/internal/elf_file.hpp"
#include "kernelhub/binary_format/internal/elf_identity.hpp"
#include "kernelhub/binary_format/internal/torch_libraries.hpp"
#include "kernelhub/fetch/internal/signature_check.hpp"
#include "kernelhub/fetch/internal/zip_layout.hpp"
#include "kernelhub/fetch/metadata.hpp"
#include "kernelhub/loader/internal/preflight.hpp"
#include "kernelhub/resolver/variant.hpp"
#include "kernelhub/signing/internal/signature_file.hpp"
#if defined(KERNELHUB_WITH_TVM_FFI)
#include "kernelhub/tvm_ffi_loader/internal/preflight.hpp"
#include "kernelhub/tvm_ffi_loader/internal/runtime.hpp"
#endif

namespace kernelhub::publish {

namespace fs = std::filesystem;

namespace {

bool is_bytecode(const fs::path& rel) {
  if (rel.extension() == ".pyc") return true;
  return std::any_of(rel.begin(), rel.end(), [](const fs::path& part) { return part == "__pycache__"; });
}

bool is_shared_library(const fs::path& rel) {
  const std::string name = rel.filename().string();
  return name.ends_with(".so") || name.find(".so.") != std::string::npos;
}

// The op namespace a kernel-builder library is named after: `_name_cpu_uid.abi3.so` → `_name_cpu_uid`.
std::string library_namespace(const fs::path& rel) {
  const std::string name = rel.filename().string();
  return name.substr(0, name.find('.'));
}

bool inside(const fs::path& path, const fs::path& root) {
  const auto rel = path.lexically_relative(root);
  return !rel.empty() && *rel.begin() != "..";
}

// Why the full pre-flight cannot judge `variant` in this process, or empty when it can.
std::string why_elf_only(const resolver::Variant& variant, const resolver::Environment* env,
                         [[maybe_unused]] const EnvironmentSource& vars) {
  if (env == nullptr) return "no environment";
  if (variant.framework == resolver::Framework::kTvmFfi) {
#if !defined(KERNELHUB_WITH_TVM_FFI)
    return "built without the tvm-ffi loader";
#else
    if (variant.cpu != env->cpu || variant.os != env->os) return "built for " + variant.cpu + "-" + variant.os;
    // The tvm-ffi pre-flight, against the TVM-FFI runtime of this machine (opened, not made global).
    auto runtime = tvm_ffi_loader::Runtime::of_process(vars);
    if (!runtime) return "no TVM-FFI runtime here (" + runtime.error().message + ")";
    if ((*runtime)->version().major_minor() != variant.framework_version) {
      return "built for TVM-FFI " + variant.framework_version.to_string() + ", the runtime here is " +
             (*runtime)->version().to_string();
    }
    return {};
#endif
  }
  const bool stable_abi = variant.framework == resolver::Framework::kTorchStableAbi;
  if (variant.framework != resolver::Framework::kTorch && !stable_abi) return "not a torch arch build";
  if (!env->torch) return "this process has no torch";
  // A stable-ABI variant runs on every torch from its version on; a classic one on its own torch.
  if (stable_abi && *env->torch < variant.framework_version) {
    return "built for the stable ABI of torch " + std::to_string(variant.framework_version.major) + "." +
           std::to_string(variant.framework_version.minor) + ", this process runs " +
           std::to_string(env->torch->major) + "." + std::to_string(env->torch->minor);
  }
  if (!stable_abi && variant.framework_version != *env->torch) {
    return "built for torch " + std::to_string(variant.framework_version.major) + "." +
           std::to_string(variant.framework_version.minor) + ", this process runs " +
           std::to_string(env->torch->major) + "." + std::to_string(env->torch->minor);
  }
  // Every torch has its CPU half; other backends need a torch built for them.
  if (variant.backend.kind != resolver::BackendKind::kCpu && variant.backend.kind != env->torch_backend.kind) {
    return "built for " + std::string(variant.backend.kind_name()) + ", this torch is " +
           std::string(env->torch_backend.kind_name());
  }
  if (variant.cpu != env->cpu || variant.os != env->os) return "built for " + variant.cpu + "-" + variant.os;
  // A CUDA kernel needs torch's CUDA half in the process, as get_kernel provides it.
  if (variant.backend.kind == resolver::BackendKind::kCuda) {
    if (auto loaded = binary_format::ensure_torch_cuda_loaded(); !loaded)
      return "torch's CUDA libraries do not load here";
  }
  return {};
}

// Writes the digest kernel-builder's `hash` step would have written, keeping every other field.
Status write_digest(const fs::path& variant_dir, const std::map<std::string, std::string>& digest) {
  const fs::path path = variant_dir / "metadata.json";
  std::ifstream in(path, std::ios::binary);
  auto doc = nlohmann::ordered_json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    return unexpected(ErrorCode::kCorruptFile, "`" + path.string() + "` is not a JSON object");
  nlohmann::ordered_json files = nlohmann::ordered_json::object();
  for (const auto& [rel, value] : digest) files[rel] = value;
  doc["digest"] = {{"algorithm", "sha256"}, {"files", files}};
  return write_file_atomic(path, doc.dump(2) + "\n", {.durability = Durability::kData});
}

// Where check_variant's steps put what they find: `<variant>: <text>`, among the check's problems.
class VariantProblems {
 public:
  VariantProblems(std::string variant, std::vector<std::string>& problems)
      : variant_(std::move(variant)), problems_(problems) {}
  void operator()(std::string text) const { problems_.push_back(variant_ + ": " + std::move(text)); }
  std::size_t count() const { return problems_.size(); }

 private:
  std::string variant_;
  std::vector<std::string>& problems_;
};

// The files published: all under the folder but kernelhub.sig and the bundle (which goes with
// the folder, checked on its own: variant_signing.hpp; --sign-key replaces it). False when a file
// cannot be published.
bool list_published_files(const fs::path& root, const CheckOptions& options, VariantDir& variant,
                          const VariantProblems& problem) {
  const std::size_t before = problem.count();
  std::vector<std::string> file_problems;
  variant.files = list_variant_files(variant.dir, root, file_problems);
  for (auto& p : file_problems) problem(std::move(p));
  const bool files_ok = problem.count() == before;

  // kernelhub.sig inside the folder (signature layout v1): kernels >= 0.18 refuses the folder,
  // and it is no longer published (docs/SIGNING.md).
  const fs::path legacy_signature(std::string(signing::kV1SignatureFileName));
  if (std::erase(variant.files, legacy_signature) > 0 && !options.signs) {
    problem("holds " + legacy_signature.string() +
            ", kernelhub's signature format of before 2026-12, which kernels >= 0.18 refuses and hub-publish no "
            "longer publishes: delete it, and sign with --sign-key KEY (a Sigstore bundle) if you sign");
  }
  const fs::path bundle_name{std::string(kSigstoreBundleName)};
  if (std::erase(variant.files, bundle_name) > 0 && !options.signs) variant.bundle = variant.dir / bundle_name;
  return files_ok;
}

// metadata.json against the folder's name and --version: its version fits a branch, its backend
// is known and the name's.
void check_metadata(const Metadata& metadata, const Result<resolver::Variant>& parsed, const CheckOptions& options,
                    VariantDir& variant, const VariantProblems& problem) {
  // Not a problem, but the `kernels` package warns on every load of such a variant: say so now.
  variant.dirty_build = metadata.provenance && metadata.provenance->is_dirty();
  variant.id = metadata.id;
  variant.layout = metadata.build_layout;
  if (metadata.version && *metadata.version > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
    problem("metadata.json says version " + std::to_string(*metadata.version) +
            ", more than a branch v<N> can be; rebuild with a smaller version in build.toml");
  } else if (metadata.version) {
    variant.metadata_version = static_cast<int>(*metadata.version);
  }
  if (options.version && variant.metadata_version && *variant.metadata_version != *options.version) {
    problem("metadata.json says version " + std::to_string(*variant.metadata_version) + " but --version is " +
            std::to_string(*options.version) + "; publish to v" + std::to_string(*variant.metadata_version) +
            " or rebuild with version = " + std::to_string(*options.version) + " in build.toml");
  }
  if (auto known = metadata.require_known_backend(); !known) {
    problem(known.error().message);
  } else if (parsed && parsed->is_arch() && metadata.backend != "agnostic" &&
             metadata.backend != parsed->backend.kind_name()) {
    problem("metadata.json backend `" + metadata.backend + "` does not match the directory name's `" +
            std::string(parsed->backend.kind_name()) + "`");
  }
}

// The op libraries: a compiled variant has one, and its file name carries the namespace metadata
// `id` names.
std::vector<fs::path> op_libraries(const VariantDir& variant, const Metadata& metadata,
                                   const Result<resolver::Variant>& parsed, const VariantProblems& problem) {
  std::vector<fs::path> libraries;
  for (const auto& rel : variant.files) {
    if (is_shared_library(rel)) libraries.push_back(rel);
  }
  const bool compiled = parsed && parsed->is_arch();
  if (compiled && libraries.empty()) problem("no .so op library; a compiled variant needs one");
  if (!libraries.empty() && std::none_of(libraries.begin(), libraries.end(),
                                         [&](const fs::path& rel) { return library_namespace(rel) == metadata.id; })) {
    problem("metadata.json `id` is `" + metadata.id + "` but the library is `" + libraries.front().string() +
            "`; the id must be the op namespace the library is named after (rebuild, do not edit by hand)");
  }
  return libraries;
}

// Digest: verified when present, computed when absent (written only with write_digest).
void check_digest(const Metadata& metadata, const CheckOptions& options, VariantDir& variant,
                  const VariantProblems& problem) {
  const fs::path& dir = variant.dir;
  if (metadata.has_digest) {
    if (auto verified = verify_digest(dir, metadata); !verified) problem(verified.error().message);
    if (auto archive = check_zip_package(dir, metadata); !archive) problem(archive.error().message);
    return;
  }
  if (auto archive = check_zip_package(dir, metadata); !archive) problem(archive.error().message);
  auto digest = compute_digest(dir);
  if (!digest) {
    problem(digest.error().message);
  } else if (options.write_digest) {
    if (auto written = write_digest(dir, *digest); !written) problem(written.error().message);
    variant.digest_added = true;
  } else {
    variant.digest_added = true;  // the dry run reports it would add one
  }
}

// The pre-flight of each library: the loader's (or tvm-ffi's) where this process could load the
// variant, else what holds everywhere (a readable ELF shared object for the variant's cpu).
void preflight_libraries(const std::vector<fs::path>& libraries, const Result<resolver::Variant>& parsed,
                         const CheckOptions& options, VariantDir& variant, const VariantProblems& problem) {
  const std::string elf_only =
      parsed ? why_elf_only(*parsed, options.environment, options.env) : "unparsable variant name";
  variant.preflight = elf_only.empty() ? "full" : "elf only: " + elf_only;
  const bool tvm_ffi = parsed && parsed->framework == resolver::Framework::kTvmFfi;
  for (const auto& rel : libraries) {
    const fs::path path = variant.dir / rel;
    if (elf_only.empty() && !tvm_ffi) {
      auto report = loader::check_loadable(path, options.env);
      if (!report) problem(rel.string() + " fails the loader pre-flight: " + report.error().message);
      continue;
    }
    auto elf = binary_format::ElfFile::read(path);
#if defined(KERNELHUB_WITH_TVM_FFI)
    if (elf && tvm_ffi && elf_only.empty()) {
      // Loads nothing: the runtime is open, the kernel library is only read.
      if (auto checked = tvm_ffi_loader::preflight(path, *elf, options.env); !checked) {
        problem(rel.string() + " fails the tvm-ffi pre-flight: " + checked.error().message);
      }
      continue;
    }
    if (elf && tvm_ffi) {
      for (const auto& why : tvm_ffi_loader::kind_problems(*elf)) problem(rel.string() + ": " + why);
    }
#endif
    if (!elf) {
      problem(rel.string() + " is not a readable ELF file: " + elf.error().message);
    } else if (elf->type != 3) {
      problem(rel.string() + " is not a shared object (ELF type " + std::to_string(elf->type) + ")");
    } else if (parsed && binary_format::machine_of_cpu(parsed->cpu) != 0 &&
               elf->machine != binary_format::machine_of_cpu(parsed->cpu)) {
      problem(rel.string() + " is built for " + std::string(binary_format::machine_name(elf->machine)) +
              " but the variant says " + parsed->cpu);
    }
  }
}

void check_variant(const fs::path& root, const fs::path& dir, const CheckOptions& options, BuildDirCheck& out) {
  const std::string name = dir.filename().string();
  const VariantProblems problem(name, out.problems);
  VariantDir variant;
  variant.name = name;
  variant.dir = dir;

  auto parsed = resolver::Variant::parse(name);
  if (!parsed) {
    problem("not a build variant name (" + parsed.error().message +
            "); name it like torch215-cxx11-cpu-x86_64-linux, or move it out of the build dir");
  } else if (parsed->to_string() != name) {
    problem("written `" + parsed->to_string() + "` in canonical form; rename the directory");
  }
  const bool files_ok = list_published_files(root, options, variant, problem);

  auto metadata = Metadata::read(dir);
  if (!metadata) {
    problem(metadata.error().code == ErrorCode::kNotFound
                ? "metadata.json is missing: a half-built or broken variant; build it (kernel-builder and our "
                  "CMake write metadata.json last), remove the folder, or publish the others with --variant NAME"
                : metadata.error().message);
    out.variants.push_back(std::move(variant));
    return;
  }
  check_metadata(*metadata, parsed, options, variant, problem);
  const std::vector<fs::path> libraries = op_libraries(variant, *metadata, parsed, problem);
  if (files_ok) check_digest(*metadata, options, variant, problem);
  preflight_libraries(libraries, parsed, options, variant, problem);
  out.variants.push_back(std::move(variant));
}

}  // namespace

std::vector<fs::path> list_variant_files(const fs::path& variant_dir, const fs::path& root,
                                         std::vector<std::string>& problems) {
  std::vector<fs::path> files;
  std::error_code ec;
  const fs::path real_root = fs::weakly_canonical(root, ec);
  for (fs::recursive_directory_iterator it(variant_dir, fs::directory_options::none, ec), end; !ec && it != end;
       it.increment(ec)) {
    const fs::path rel = it->path().lexically_relative(variant_dir);
    if (is_bytecode(rel)) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    std::error_code st_ec;
    if (it->is_symlink(st_ec)) {
      const fs::path target = fs::weakly_canonical(it->path(), st_ec);
      if (st_ec || !fs::exists(target)) {
        problems.push_back(rel.string() + " is a dangling symlink; remove it or copy the file in");
        continue;
      }
      if (!inside(target, real_root)) {
        problems.push_back(rel.string() + " is a symlink leading out of the build dir (to " + target.string() +
                           "); copy the file in instead");
        continue;
      }
      if (fs::is_directory(target)) {
        problems.push_back(rel.string() + " is a symlink to a directory; copy the directory in instead");
        continue;
      }
    }
    if (it->is_directory(st_ec)) continue;
    if (!it->is_regular_file(st_ec)) {
      problems.push_back(rel.string() + " is not a regular file (a socket, fifo or device); remove it");
      continue;
    }
    files.push_back(rel);
  }
  if (ec) problems.push_back("cannot list the directory: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

Status add_digest(const fs::path& variant_dir) {
  KH_ASSIGN_OR_RETURN(auto digest, compute_digest(variant_dir));
  return write_digest(variant_dir, digest);
}

BuildDirCheck check_build_dir(const fs::path& dir, const CheckOptions& options) {
  BuildDirCheck out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    out.problems.push_back(dir.string() + ": not a directory; pass the folder holding the build/<variant>/ folders");
    return out;
  }
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(dir, ec)) entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end());
  for (const auto& wanted : options.only) {
    const bool found =
        std::any_of(entries.begin(), entries.end(), [&](const fs::path& p) { return p.filename() == wanted; });
    if (found) continue;
    std::string names;
    for (const auto& p : entries) names += (names.empty() ? "" : ", ") + p.filename().string();
    out.problems.push_back("--variant " + wanted + ": no such folder in " + dir.string() +
                           (names.empty() ? std::string(" (it is empty)") : " (it holds " + names + ")"));
  }
  const auto is_selected = [&](const std::string& name) {
    return options.only.empty() || std::find(options.only.begin(), options.only.end(), name) != options.only.end();
  };
  for (const auto& path : entries) {
    const std::string name = path.filename().string();
    std::error_code st_ec;
    if (name.ends_with(signing::kSignatureSuffix)) {  // kernelhub.sig beside a folder (layout v2)
      const std::string variant = name.substr(0, name.size() - signing::kSignatureSuffix.size());
      if (!is_selected(variant) || options.signs) continue;
      out.problems.push_back(name +
                             ": kernelhub's signature format of before 2026-12, which hub-publish no longer "
                             "publishes: delete it, and sign with --sign-key KEY (a Sigstore bundle, "
                             "metadata.json.sigstore in the folder) if you sign");
      continue;
    }
    if (!is_selected(name)) continue;
    if (fs::is_symlink(path, st_ec)) {
      out.problems.push_back(name + ": a symlink at the top of the build dir; variants must be real directories");
      continue;
    }
    if (!fs::is_directory(path, st_ec)) {
      out.problems.push_back(name + ": not a variant directory; only build/<variant>/ folders are published");
      continue;
    }
    check_variant(dir, path, options, out);
  }
  if (entries.empty()) out.problems.push_back(dir.string() + ": no variant directories in it; build the kernel first");
  return out;
}

}  // namespace kernelhub::publish
