// The "zip" build layout (metadata.json `"build-layout": "zip"`, kernels 0.19): the variant's
// Python package is one archive, `build/<variant>/<id>.zip`, with `__init__.py` at its root; the
// native libraries (the op library) stay beside it in the variant directory. kernels imports the
// package with `__path__ = [variant directory, archive]`, so `from . import <id>` finds the
// library beside the archive and every other import finds its module inside. The archive is one
// file of metadata.json's digest and of a signature, verified as any other file; the C++ loader
// dlopens the library beside it and never opens the archive.
//
// check_zip_package() runs on every load before anything imports the archive, after the digest
// check (which catches changed bytes): it refuses what zipimport would read in ways the digest
// cannot judge. The archive must be whole (base/zip_archive.hpp: a cut file is refused), and each
// member a regular file or directory (no symlink, device or FIFO, which extracting tools would
// create) named inside the package: a relative `/`-separated path with no `..`, `.` or empty
// segment, no `\`, `:` or control character, valid UTF-8 (signing's manifest path rule), given
// once, stored or deflated (what zipimport reads); and `__init__.py` must be at its root.
//
// Thread safety: free functions; they only read the disk.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"
#include "kernelhub/fetch/metadata.hpp"

namespace kernelhub {

// `<variant_dir>/<id>.zip`.
std::filesystem::path zip_package_path(const std::filesystem::path& variant_dir, std::string_view id);

// Why `name` cannot be a member of a kernel's package archive (a phrase: "an absolute path, ..."),
// or nullopt when it can.
std::optional<std::string> zip_member_name_problem(std::string_view name);

// For a zip-layout variant, the checks above over `<id>.zip`; nothing for the files layout.
// Errors: kNotFound (no archive), kCorruptFile (naming the archive, the member and what to do), kIo.
Status check_zip_package(const std::filesystem::path& variant_dir, const Metadata& metadata);

}  // namespace kernelhub
