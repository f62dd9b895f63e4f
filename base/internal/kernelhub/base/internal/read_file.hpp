// read_file: a whole (small) file as bytes: JSON records, refs, tokens, keys, upload content.
//
// Thread safety: a free function. Touches disk.
#pragma once

#include <filesystem>
#include <string>

#include "kernelhub/base/result.hpp"

namespace kernelhub {

// Errors: kNotFound (no such file), kIo (naming the file and the reason).
Result<std::string> read_file(const std::filesystem::path& path);

}  // namespace kernelhub
