#include "mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace kernelhub::binary_format {

Result<MappedFile> MappedFile::open(const std::filesystem::path& path) {
  MappedFile m;
  m.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (m.fd_ < 0) return unexpected(os_error("cannot open `" + path.string() + "`", errno));
  struct stat st {};
  if (::fstat(m.fd_, &st) != 0) return unexpected(os_error("cannot stat `" + path.string() + "`", errno));
  if (!S_ISREG(st.st_mode)) return unexpected(ErrorCode::kIo, "`" + path.string() + "` is not a regular file");
  m.size_ = static_cast<std::size_t>(st.st_size);
  if (m.size_ == 0) return m;
  void* data = ::mmap(nullptr, m.size_, PROT_READ, MAP_PRIVATE, m.fd_, 0);
  if (data == MAP_FAILED) return unexpected(os_error("cannot map `" + path.string() + "`", errno));
  m.data_ = data;
  return m;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), data_(std::exchange(other.data_, nullptr)), size_(other.size_) {}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
  if (fd_ >= 0) ::close(fd_);
}

std::string_view MappedFile::bytes() const {
  return data_ != nullptr ? std::string_view(static_cast<const char*>(data_), size_) : std::string_view();
}

}  // namespace kernelhub::binary_format
