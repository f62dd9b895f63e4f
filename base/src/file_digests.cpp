#include "kernelhub/base/internal/file_digests.hpp"

#include <optional>
#include <system_error>

#include "file_chunks.hpp"
#include "kernelhub/base/error.hpp"
#include "kernelhub/base/internal/git_blob_sha1.hpp"

namespace kernelhub {

namespace {

// One read: the sha256 always, the git blob sha1 when the file is small enough to be a git blob
// (or `always_sha1`).
Result<FileHash> read_hashes(const std::filesystem::path& path, bool always_sha1) {
  Sha256 sha256;
  std::optional<GitBlobSha1> sha1;
  KH_ASSIGN_OR_RETURN(const std::uint64_t size, detail::read_file_chunks(
                                                    path,
                                                    [&](std::uint64_t size) {
                                                      if (always_sha1 || size <= FileDigests::kGitBlobLimit)
                                                        sha1.emplace(size);
                                                    },
                                                    [&](const char* data, std::size_t n) {
                                                      sha256.update(data, n);
                                                      if (sha1) sha1->update(data, n);
                                                    }));
  FileHash hash{sha256.finish(), size, ""};
  if (sha1) hash.git_sha1 = sha1->finish_hex();
  return hash;
}

}  // namespace

Result<FileDigests::Entry> FileDigests::entry(const std::filesystem::path& path, bool need_git_sha1) {
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(path, ec);
  if (ec) return unexpected(os_error("cannot open `" + path.string() + "`", ec.value()));
  KH_ASSIGN_OR_RETURN(FileStamp stamp, FileStamp::of(canonical));
  const auto holds = [&](const Entry& e) { return e.stamp == stamp && (!need_git_sha1 || !e.hash.git_sha1.empty()); };
  if (auto it = used_.find(canonical); it != used_.end() && holds(it->second)) return it->second;
  if (auto it = known_.find(canonical); it != known_.end() && holds(it->second)) {
    used_.insert_or_assign(canonical, it->second);
    return it->second;
  }
  KH_ASSIGN_OR_RETURN(FileHash hash, read_hashes(canonical, need_git_sha1));
  bytes_read_ += hash.size;
  // Stat again after the read: a file that changed while it was read keeps no entry that could
  // vouch for its new content.
  const Entry read{stamp, std::move(hash)};
  KH_ASSIGN_OR_RETURN(FileStamp after, FileStamp::of(canonical));
  if (after == stamp && after.size == read.hash.size) used_.insert_or_assign(canonical, read);
  return read;
}

Result<FileHash> FileDigests::hash(const std::filesystem::path& path) {
  KH_ASSIGN_OR_RETURN(Entry found, entry(path, false));
  return std::move(found.hash);
}

Result<Sha256Digest> FileDigests::sha256(const std::filesystem::path& path) {
  KH_ASSIGN_OR_RETURN(Entry found, entry(path, false));
  return found.hash.digest;
}

Result<std::string> FileDigests::git_sha1(const std::filesystem::path& path) {
  KH_ASSIGN_OR_RETURN(Entry found, entry(path, true));
  return std::move(found.hash.git_sha1);
}

void FileDigests::remember(const std::filesystem::path& canonical, const Entry& entry) {
  known_.insert_or_assign(canonical, entry);
}

Result<Sha256Digest> sha256_file(const std::filesystem::path& path, FileDigests* digests) {
  return digests != nullptr ? digests->sha256(path) : sha256_file(path);
}

Result<FileHash> hash_file(const std::filesystem::path& path, FileDigests* digests) {
  return digests != nullptr ? digests->hash(path) : hash_file(path);
}

}  // namespace kernelhub
