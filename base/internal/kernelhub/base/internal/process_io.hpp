// What this process has read: the bytes its read(2) calls and their kin returned so far
// (/proc/self/io `rchar`), for the CLI's and the benchmarks' accounting of a load. Pages of a
// mapped file are not counted. None where /proc is not there.
#pragma once

#include <cstdint>
#include <optional>

namespace kernelhub {

std::optional<std::uint64_t> bytes_read_by_process();

}  // namespace kernelhub
