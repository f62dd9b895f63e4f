// BuildDirCheck: everything hub-publish verifies about DIR/<variant>/ before a byte is sent:
// each name parses as a build variant, metadata.json is there and agrees with the
// library (`id` = the op namespace the .so is named after, backend, version), its digest matches
// the files (computed and written when absent), a zip layout's package archive is sound
// (fetch's zip_layout.hpp), nothing leads out of DIR, and our loader's pre-flight accepts each
// .so. A variant's Sigstore bundle, `metadata.json.sigstore` in its folder, goes with it
// (variant_signing.hpp checks it still signs metadata.json). kernelhub's signature of before
// 2026-12 (`kernelhub.sig` inside the folder, `<variant>.kernelhub.sig` beside it) is no longer
// published: refused, unless the run signs anew (--sign-key). Every problem is collected, so one run
// lists them all.
//
// The full pre-flight (needed libraries, glibc, torch symbols) only means something for a variant
// this process could load: same torch version and backend. The others get the checks that hold
// everywhere (a readable ELF shared object for the variant's cpu), and the report says so.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/fetch/metadata.hpp"
#include "kernelhub/resolver/environment.hpp"

namespace kernelhub::publish {

struct VariantDir {
  std::string name;                                // torch215-cxx11-cpu-x86_64-linux
  std::filesystem::path dir;                       // DIR/<name>
  std::vector<std::filesystem::path> files;        // relative to dir, sorted; what gets uploaded
  std::optional<int> metadata_version;             // metadata.json `version`
  std::string preflight;                           // "full", or "elf only: <why>"
  bool digest_added = false;                       // metadata.json had no digest; one was computed
  bool dirty_build = false;                        // its provenance says a tree had uncommitted changes
  std::string id;                                  // metadata.json `id`
  BuildLayout layout = BuildLayout::kFiles;        // metadata.json `build-layout`, or as staged
  // The Sigstore bundle uploaded as build/<name>/metadata.json.sigstore: the folder's own, or the
  // one --sign-key made (staged outside the build folder). Not among `files`.
  std::optional<std::filesystem::path> bundle;
};

struct BuildDirCheck {
  std::vector<VariantDir> variants;   // sorted by name
  std::vector<std::string> problems;  // "<variant>: <what is wrong and what to do>"
};

struct CheckOptions {
  std::optional<int> version;                          // --version N: metadata `version` must agree
  bool write_digest = true;                            // false (dry run): report a missing digest only
  const resolver::Environment* environment = nullptr;  // this process; null: ELF checks only
  std::vector<std::string> only;                       // --variant: these folders alone; empty: all
  bool signs = false;     // --sign-key: the variants are signed anew (an old signature is dropped)
  EnvironmentSource env;  // the run's configuration, for the pre-flight (LD_LIBRARY_PATH, the TVM-FFI runtime)
};

// Computes the digest of a variant directory and writes it into its metadata.json, keeping every
// other field (what kernel-builder's `hash` step does). Errors: kIo, kCorruptFile.
Status add_digest(const std::filesystem::path& variant_dir);

BuildDirCheck check_build_dir(const std::filesystem::path& dir, const CheckOptions& options);

// The files of one variant directory, as they would be uploaded (bytecode left out).
// Adds a problem for every symlink leading out of `root`, and for special files.
std::vector<std::filesystem::path> list_variant_files(const std::filesystem::path& variant_dir,
                                                      const std::filesystem::path& root,
                                                      std::vector<std::string>& problems);

}  // namespace kernelhub::publish
