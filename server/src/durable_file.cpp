#include "durable_file.hpp"

#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

namespace kernelhub::server {

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) {
    // RAND_bytes only fails without an entropy source; fall back to /dev/urandom.
    std::ifstream urandom("/dev/urandom", std::ios::binary);
    urandom.read(raw.data(), static_cast<std::streamsize>(bytes));
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes * 2);
  for (unsigned char c : raw) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

Result<TempFile> TempFile::create(const std::filesystem::path& dir) {
  std::filesystem::path path = dir / ("tmp-" + random_hex(12));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return unexpected(os_error("cannot create temp file `" + path.string() + "`", errno));
  return TempFile(UniqueFd(fd), std::move(path));
}

TempFile::~TempFile() {
  if (!keep_ && !path_.empty()) ::unlink(path_.c_str());
}

TempFile::TempFile(TempFile&& other) noexcept
    : fd_(std::move(other.fd_)), path_(std::move(other.path_)), keep_(other.keep_) {
  other.path_.clear();
  other.keep_ = true;
}

Status TempFile::write(const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd_.get(), p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return unexpected(os_error("cannot write `" + path_.string() + "`", errno));
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return {};
}

Status TempFile::finish() {
  if (!fd_) return {};
  if (::fsync(fd_.get()) != 0) return unexpected(os_error("cannot fsync `" + path_.string() + "`", errno));
  int fd = fd_.release();
  if (::close(fd) != 0) return unexpected(os_error("cannot close `" + path_.string() + "`", errno));
  return {};
}

Status TempFile::commit_to(const std::filesystem::path& target) {
  KH_RETURN_IF_ERROR(finish());
  if (::rename(path_.c_str(), target.c_str()) != 0) {
    return unexpected(os_error("cannot rename `" + path_.string() + "` to `" + target.string() + "`", errno));
  }
  keep_ = true;
  return fsync_directory(target.parent_path());
}

Status fsync_directory(const std::filesystem::path& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return unexpected(os_error("cannot open directory `" + dir.string() + "`", errno));
  if (::fsync(fd.get()) != 0) return unexpected(os_error("cannot fsync directory `" + dir.string() + "`", errno));
  return {};
}

Status write_file_durably(const std::filesystem::path& target, std::string_view bytes,
                          const std::filesystem::path& tmp_dir) {
  KH_ASSIGN_OR_RETURN(TempFile temp, TempFile::create(tmp_dir));
  KH_RETURN_IF_ERROR(temp.write(bytes.data(), bytes.size()));
  return temp.commit_to(target);
}

Result<std::string> read_small_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return unexpected(ErrorCode::kNotFound, "no file `" + path.string() + "`");
    return unexpected(os_error("cannot open `" + path.string() + "`", errno));
  }
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return unexpected(os_error("cannot read `" + path.string() + "`", EIO));
  return out.str();
}

}  // namespace kernelhub::server
