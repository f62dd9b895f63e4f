// write_zip: a ZIP archive whose bytes depend on nothing but its members' names and contents.
//
// Members are sorted bytewise by name and stored uncompressed, with the DOS epoch (1980-01-01
// 00:00) as their time, Unix mode 0644 and no extra fields, so the same files always make the
// same archive, on any machine and with any zlib: a republished build changes no byte, and a
// digest or signature of the archive stays valid. Python's zipimport reads stored members
// directly. No ZIP64: the archive and each member stay under 4 GiB.
//
// Thread safety: a free function.
#pragma once

#include <string>
#include <vector>

#include "kernelhub/base/result.hpp"

namespace kernelhub {

struct ZipInput {
  std::string name;  // `/`-separated path inside the archive
  std::string bytes;
};

// The archive's bytes. Errors: kInvalidArgument (an empty, duplicate or over-long name, or more
// than ZIP's 65535 members or 4 GiB).
Result<std::string> write_zip(std::vector<ZipInput> members);

}  // namespace kernelhub
