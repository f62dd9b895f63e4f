#include "kernelhub/signing/internal/serial_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <string>

#include "kernelhub/base/internal/unique_fd.hpp"

namespace kernelhub::signing {

namespace fs = std::filesystem;

namespace {

// Repo and variant are manifest tokens: no whitespace, but they may hold `/`; keep one level.
std::string file_part(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '/') c = '-';
  }
  return out;
}

}  // namespace

std::optional<fs::path> SerialStore::default_dir(const EnvironmentSource& env) {
  if (auto state = env(env_vars::kXdgStateHome); state && fs::path(*state).is_absolute()) {
    return fs::path(*state) / "kernelhub" / "signature-serials";
  }
  if (auto home = env(env_vars::kHome)) return fs::path(*home) / ".local" / "state" / "kernelhub" / "signature-serials";
  return std::nullopt;
}

Status SerialStore::check_and_record(const VariantIdentity& identity, std::uint64_t serial) const {
  const std::string org = identity.repo.substr(0, identity.repo.find('/'));
  const std::string name = identity.repo.substr(identity.repo.find('/') + 1);
  const fs::path folder = dir_ / (file_part(org) + "--" + file_part(name));
  const fs::path record = folder / (file_part(identity.variant) + "@" +
                                    (identity.version ? "v" + std::to_string(*identity.version) : std::string("none")));
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) return {};  // no place to keep state: best effort
  UniqueFd fd(::open(record.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (fd.get() < 0) {
    if (errno == EACCES || errno == EROFS || errno == EPERM) return {};
    return unexpected(os_error("cannot open signature serial record `" + record.string() + "`", errno));
  }
  if (::flock(fd.get(), LOCK_EX) != 0) return unexpected(os_error("cannot lock `" + record.string() + "`", errno));
  char buffer[32];
  const ssize_t n = ::pread(fd.get(), buffer, sizeof buffer - 1, 0);
  if (n < 0) return unexpected(os_error("cannot read `" + record.string() + "`", errno));
  std::uint64_t recorded = 0;
  if (n > 0) {
    const auto [end, err] = std::from_chars(buffer, buffer + n, recorded);
    if (err != std::errc() || (end != buffer + n && *end != '\n')) {
      return unexpected(ErrorCode::kIo,
                        "signature serial record `" + record.string() + "` is not a number; delete it to start over");
    }
  }
  if (serial < recorded) {
    return unexpected(ErrorCode::kBadSignature,
                      "`" + identity.repo + "` variant `" + identity.variant + "` is validly signed with serial " +
                          std::to_string(serial) + ", but serial " + std::to_string(recorded) +
                          " was already accepted on this machine: this is an older build of the same version (a "
                          "rollback). Do not load it; if the publisher really withdrew the newer build, delete `" +
                          record.string() + "`");
  }
  if (serial > recorded || n == 0) {
    const std::string text = std::to_string(serial) + "\n";
    if (::ftruncate(fd.get(), 0) == 0) {
      (void)!::pwrite(fd.get(), text.data(), text.size(), 0);  // best effort, see the header
    }
  }
  return {};
}

}  // namespace kernelhub::signing
