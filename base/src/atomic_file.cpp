#include "kernelhub/base/internal/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "kernelhub/base/internal/random_name.hpp"

namespace kernelhub {

namespace fs = std::filesystem;

fs::path temp_path_beside(const fs::path& target) {
  return target.string() + "." + random_hex(4) + ".tmp";
}

Result<TempFile> TempFile::create_beside(const fs::path& target, unsigned mode) {
  return open_exclusive(temp_path_beside(target), mode);
}

Result<TempFile> TempFile::create_in(const fs::path& dir, unsigned mode) {
  return open_exclusive(dir / ("tmp-" + random_hex(12)), mode);
}

Result<TempFile> TempFile::open_exclusive(fs::path path, unsigned mode) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  if (!fd) return unexpected(os_error("cannot create temp file `" + path.string() + "`", errno));
  return TempFile(std::move(fd), std::move(path));
}

TempFile::~TempFile() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

TempFile::TempFile(TempFile&& other) noexcept : fd_(std::move(other.fd_)), path_(std::move(other.path_)) {
  other.path_.clear();
}

Status TempFile::write(const void* data, std::size_t size) {
  return write_fully(fd_.get(), std::string_view(static_cast<const char*>(data), size), path_);
}

Status TempFile::finish(Durability durability) {
  if (!fd_) return {};
  if (durability == Durability::kData && ::fdatasync(fd_.get()) != 0) {
    return unexpected(os_error("cannot sync `" + path_.string() + "`", errno));
  }
  if (durability == Durability::kFull && ::fsync(fd_.get()) != 0) {
    return unexpected(os_error("cannot fsync `" + path_.string() + "`", errno));
  }
  if (::close(fd_.release()) != 0) return unexpected(os_error("cannot close `" + path_.string() + "`", errno));
  return {};
}

Status TempFile::commit_to(const fs::path& target, Durability durability) {
  KH_RETURN_IF_ERROR(finish(durability));
  const fs::path from = std::move(path_);
  path_.clear();  // from here on rename_into_place owns the file
  return rename_into_place(from, target, durability);
}

Status write_file_atomic(const fs::path& target, std::string_view content, const AtomicWrite& how) {
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  KH_ASSIGN_OR_RETURN(TempFile temp, how.staging_dir.empty() ? TempFile::create_beside(target, how.mode)
                                                             : TempFile::create_in(how.staging_dir, how.mode));
  KH_RETURN_IF_ERROR(temp.write(content));
  return temp.commit_to(target, how.durability);
}

Status rename_into_place(const fs::path& from, const fs::path& to, Durability durability) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    const int saved = errno;
    ::unlink(from.c_str());
    return unexpected(os_error("cannot rename `" + from.string() + "` to `" + to.string() + "`", saved));
  }
  if (durability == Durability::kFull) return fsync_directory(to.parent_path());
  return {};
}

Status fsync_directory(const fs::path& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return unexpected(os_error("cannot open directory `" + dir.string() + "`", errno));
  if (::fsync(fd.get()) != 0) return unexpected(os_error("cannot fsync directory `" + dir.string() + "`", errno));
  return {};
}

Status write_fully(int fd, std::string_view bytes, const fs::path& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return unexpected(os_error("cannot write `" + path.string() + "`", errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

}  // namespace kernelhub
