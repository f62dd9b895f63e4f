// Private to base: the chunked file reader every file digest streams through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>

#include "kernelhub/base/result.hpp"

namespace kernelhub::detail {

// Reads `path` once, in 1 MiB chunks, handing each to `chunk`. `before` is called first with the
// file's size (from the open file, so it is the size of what is read). Returns the bytes read.
// Errors: kNotFound, kIo.
Result<std::uint64_t> read_file_chunks(const std::filesystem::path& path,
                                       const std::function<void(std::uint64_t size)>& before,
                                       const std::function<void(const char* data, std::size_t size)>& chunk);

}  // namespace kernelhub::detail
