// Publishing a files-layout variant in the zip layout (hub-publish --layout zip; fetch's
// zip_layout.hpp says what the layout is). The build folder is left as it is: the variant is
// staged in a folder of its own, with
//   - its native libraries (`*.so`, `*.so.*`, `*.dylib`, `*.dll`, `*.pyd`), copied as they are;
//   - metadata.json and symbols.json (which `kernels describe-api` reads without importing);
//   - `<id>.zip` holding every other file, the Python package, made by base/zip_writer.hpp: the
//     same files always give the same bytes;
// and metadata.json gains `"build-layout": "zip"`, `"kernels-minver": "0.19.0"` (unless it asks
// for a newer one: older `kernels` cannot import the archive and then say which version to
// install) and the digest of the staged files. Only the flat layout kernel-builder writes is
// staged: `__init__.py` and the libraries at the top of the folder.
//
// Thread safety: free functions; they touch disk.
#pragma once

#include <filesystem>

#include "build_dir_check.hpp"
#include "kernelhub/base/result.hpp"

namespace kernelhub::publish {

// A fresh folder under the system's temp folder, removed with everything in it on destruction.
class StagingFolder {
 public:
  // Errors: kIo.
  static Result<StagingFolder> create();
  StagingFolder(StagingFolder&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  StagingFolder& operator=(StagingFolder&&) = delete;
  ~StagingFolder();
  const std::filesystem::path& path() const { return path_; }

 private:
  explicit StagingFolder(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

// Stages `variant` (checked, files layout) in the zip layout as `<staging>/<name>/` and points
// its dir, files and layout there. Errors: kInvalidArgument (not the flat layout), kIo.
Status stage_zip_layout(VariantDir& variant, const std::filesystem::path& staging);

}  // namespace kernelhub::publish
