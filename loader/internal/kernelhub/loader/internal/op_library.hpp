// OpLibrary: a torch op library loaded into this process, and the ops it registered.
//
// open() runs the pre-flight (preflight.hpp), provides the Python stub when needed, and dlopens
// the file by absolute path with RTLD_NOW | RTLD_LOCAL: never a search of the working directory
// or LD_LIBRARY_PATH for the kernel itself. Its TORCH_LIBRARY static initialisers register the
// ops under `ns` (metadata.json `id`); open() then checks that the namespace really has ops.
//
// Lifetime: op libraries are never unloaded (as Python never unloads extension modules): torch
// keeps pointers into them. open() on the same file (by canonical path) returns the same
// shared instance. Thread safety: open() is serialised by a process-wide mutex; an OpLibrary is
// immutable after open.
#pragma once

#include <ATen/core/function_schema.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/binary_format/internal/elf_file.hpp"
#include "kernelhub/loader/op_info.hpp"

namespace kernelhub::loader {

class OpLibrary {
 public:
  // Errors: kNotFound, kCorruptFile, kIncompatibleBinary (from the pre-flight), kLoadFailed
  // (dlopen failed, or no op was registered under `ns`).
  // `elf`: the file's ELF when the caller already parsed it (the pre-flight then reads nothing).
  static Result<std::shared_ptr<const OpLibrary>> open(const std::filesystem::path& path, const std::string& ns,
                                                       const EnvironmentSource& env,
                                                       const binary_format::ElfFile* elf = nullptr);

  const std::filesystem::path& path() const { return path_; }
  const std::string& ns() const { return ns_; }
  const std::vector<OpInfo>& ops() const { return ops_; }

  OpLibrary(std::filesystem::path path, std::string ns, void* handle, std::vector<OpInfo> ops)
      : path_(std::move(path)), ns_(std::move(ns)), handle_(handle), ops_(std::move(ops)) {}

 private:
  std::filesystem::path path_;
  std::string ns_;
  void* handle_;  // owned by the process for its lifetime (see the header comment)
  std::vector<OpInfo> ops_;
};

// `schema` as the schema language writes it, e.g. "ns::op(Tensor(a!) out, Tensor input) -> ()" (c10
// prints the anonymous alias set of `Tensor!` as `Tensor($0! -> )`).
std::string schema_text(const c10::FunctionSchema& schema);

// The ops registered under namespace `ns` in this process, sorted by name.
std::vector<OpInfo> registered_ops(const std::string& ns);

}  // namespace kernelhub::loader
