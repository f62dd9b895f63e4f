// kernels' same-build check: a process imports one kernel per metadata `id`, so a second build
// with the id of one it already imported (`loaded`) must be that build, or the second import
// would silently get the first's code. Same build: equal digests, or neither has one. Only the
// Python shim imports by id (kernels' importer.py), so the check and its words are the shim's.
//
// Thread safety: a free function over values.
#pragma once

#include <filesystem>

#include "kernelhub/base/result.hpp"
#include "kernelhub/fetch/metadata.hpp"

namespace kernelhub::kernels_words {

// Errors: kIntegrityMismatch, in kernels' words (importer.py).
Status check_same_build(const Metadata& loaded, const Metadata& candidate, const std::filesystem::path& candidate_dir);

}  // namespace kernelhub::kernels_words
