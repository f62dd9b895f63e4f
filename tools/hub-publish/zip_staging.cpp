#include "zip_staging.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <nlohmann/json.hpp>

#include "kernelhub/base/internal/atomic_file.hpp"
#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/base/internal/zip_writer.hpp"
#include "kernelhub/fetch/internal/zip_layout.hpp"

namespace kernelhub::publish {

namespace fs = std::filesystem;

namespace {

// The oldest `kernels` that imports the zip layout.
constexpr int kZipLayoutMinver[3] = {0, 19, 0};

bool is_native_library(const fs::path& rel) {
  const std::string name = rel.filename().string();
  return name.ends_with(".so") || name.find(".so.") != std::string::npos || name.ends_with(".dylib") ||
         name.ends_with(".dll") || name.ends_with(".pyd");
}

// What stays beside the archive: the libraries kernels finds through `__path__[0]` and the files
// read from the variant folder itself.
bool stays_beside(const fs::path& rel) {
  return is_native_library(rel) || rel == "metadata.json" || rel == "metadata.json.sigstore" || rel == "symbols.json" ||
         rel == "op_schemas.json";
}

// metadata.json's `kernels-minver`, raised to what the zip layout needs.
std::string raised_minver(const nlohmann::ordered_json& doc) {
  const std::string wanted = std::to_string(kZipLayoutMinver[0]) + "." + std::to_string(kZipLayoutMinver[1]) + "." +
                             std::to_string(kZipLayoutMinver[2]);
  auto it = doc.find("kernels-minver");
  if (it == doc.end() || !it->is_string()) return wanted;
  const std::string current = it->get<std::string>();
  int parts[3] = {0, 0, 0};
  const char* at = current.data();
  const char* end = current.data() + current.size();
  for (int& part : parts) {
    at = std::from_chars(at, end, part).ptr;
    if (at != end && *at == '.') ++at;
  }
  return std::lexicographical_compare(parts, parts + 3, kZipLayoutMinver, kZipLayoutMinver + 3) ? wanted : current;
}

Status write_metadata(const fs::path& from, const fs::path& to) {
  KH_ASSIGN_OR_RETURN(std::string text, read_file(from));
  auto doc = nlohmann::ordered_json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return unexpected(ErrorCode::kCorruptFile, "`" + from.string() + "` is not a JSON object");
  }
  doc["build-layout"] = "zip";
  doc["kernels-minver"] = raised_minver(doc);
  return write_file_atomic(to, doc.dump(2) + "\n");
}

}  // namespace

Result<StagingFolder> StagingFolder::create() {
  std::error_code ec;
  std::string pattern = (fs::temp_directory_path(ec) / "hub-publish-XXXXXX").string();
  if (ec) return unexpected(os_error("no temp folder for staging", ec.value()));
  if (::mkdtemp(pattern.data()) == nullptr) return unexpected(os_error("cannot create `" + pattern + "`", errno));
  return StagingFolder(pattern);
}

StagingFolder::~StagingFolder() {
  std::error_code ec;
  if (!path_.empty()) fs::remove_all(path_, ec);
}

Status stage_zip_layout(VariantDir& variant, const fs::path& staging) {
  const fs::path staged = staging / variant.name;
  std::error_code ec;
  fs::create_directories(staged, ec);
  if (ec) return unexpected(os_error("cannot create `" + staged.string() + "`", ec.value()));
  std::vector<ZipInput> package;
  std::vector<fs::path> files;
  bool has_init = false;
  for (const fs::path& rel : variant.files) {
    if (!stays_beside(rel)) {
      KH_ASSIGN_OR_RETURN(std::string bytes, read_file(variant.dir / rel));
      package.push_back({rel.generic_string(), std::move(bytes)});
      has_init = has_init || rel == "__init__.py";
      continue;
    }
    if (rel.has_parent_path()) {
      return unexpected(ErrorCode::kInvalidArgument,
                        variant.name + ": `" + rel.generic_string() +
                            "` is not at the top of the folder; --layout zip stages the flat layout kernel-builder "
                            "writes (libraries beside the archive, where kernels looks for them)");
    }
    if (rel == "metadata.json") continue;  // written below
    fs::copy_file(variant.dir / rel, staged / rel, ec);
    if (ec) return unexpected(os_error("cannot copy `" + (variant.dir / rel).string() + "`", ec.value()));
    files.push_back(rel);
  }
  if (!has_init) {
    return unexpected(ErrorCode::kInvalidArgument,
                      variant.name +
                          ": no __init__.py at the top of the folder, so there is no package to put in "
                          "the archive; --layout zip stages the flat layout kernel-builder writes");
  }
  for (const ZipInput& member : package) {
    if (auto problem = zip_member_name_problem(member.name)) {
      return unexpected(ErrorCode::kInvalidArgument, variant.name + ": `" + member.name + "`: " + *problem);
    }
  }
  const fs::path archive = zip_package_path(staged, variant.id);
  KH_ASSIGN_OR_RETURN(std::string bytes, write_zip(std::move(package)));
  KH_RETURN_IF_ERROR(write_file_atomic(archive, bytes));
  files.push_back(archive.filename());
  KH_RETURN_IF_ERROR(write_metadata(variant.dir / "metadata.json", staged / "metadata.json"));
  KH_RETURN_IF_ERROR(add_digest(staged));
  files.push_back("metadata.json");
  std::sort(files.begin(), files.end());
  variant.dir = staged;
  variant.files = std::move(files);
  variant.layout = BuildLayout::kZip;
  variant.bundle.reset();  // a bundle of the files layout's metadata.json does not sign this one
  return {};
}

}  // namespace kernelhub::publish
