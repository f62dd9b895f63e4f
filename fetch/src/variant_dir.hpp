// A variant directory on disk: its description and its op library.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/fetch/metadata.hpp"

namespace kernelhub {

// metadata.json, or for variants built before kernel-builder wrote one, the op namespace from
// `_ops.py` (`ops = torch.ops._name_cpu_uid`). Errors: kNotFound (neither), those of Metadata::read.
Result<Metadata> read_variant_metadata(const std::filesystem::path& dir);

// The op library of a variant: `<id>.abi3.so` (kernel-builder's name), else the only `.so` in the
// directory, else the only one in `<pkg>/` (the layout before Nov 2025).
// Errors: kNotFound (none), kCorruptFile (several, none named after the namespace).
Result<std::filesystem::path> find_op_library(const std::filesystem::path& dir, const std::string& ns);

// The directories in `dir`, sorted.
std::vector<std::string> subdirectories(const std::filesystem::path& dir);

}  // namespace kernelhub
