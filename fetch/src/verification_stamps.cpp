#include "kernelhub/fetch/internal/verification_stamps.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kernelhub/base/internal/atomic_file.hpp"
#include "kernelhub/base/internal/json_nesting.hpp"
#include "kernelhub/base/internal/name_hash.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "kernelhub/base/internal/state_dir.hpp"

namespace kernelhub {

namespace {

using Files = std::map<std::filesystem::path, FileDigests::Entry>;

std::filesystem::path canonical_or_same(const std::filesystem::path& path) {
  std::error_code ec;
  auto canonical = std::filesystem::canonical(path, ec);
  return ec ? path : canonical;
}

std::optional<Sha256Digest> digest_from_hex(std::string_view hex) {
  if (!is_lower_hex(hex, 64)) return std::nullopt;
  Sha256Digest out{};
  auto nibble = [](char c) { return static_cast<std::uint8_t>(c <= '9' ? c - '0' : c - 'a' + 10); };
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<std::uint8_t>(nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
  }
  return out;
}

// The files a stamp file records; empty when it is absent or malformed (then nothing is trusted).
Files read_stamp_file(const std::filesystem::path& file, const std::filesystem::path& dir) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  const std::string json = text.str();
  if (json.size() > (8u << 20) || !json_nesting_within(json, 8)) return {};
  const auto doc = nlohmann::json::parse(json, nullptr, false);
  if (!doc.is_object() || doc.value("dir", "") != dir.string() || !doc.contains("files") || !doc["files"].is_array()) {
    return {};
  }
  Files out;
  try {
    for (const auto& f : doc["files"]) {
      FileDigests::Entry entry;
      entry.stamp.device = f.at("device").get<std::uint64_t>();
      entry.stamp.inode = f.at("inode").get<std::uint64_t>();
      entry.stamp.size = f.at("size").get<std::uint64_t>();
      entry.stamp.modified_ns = f.at("modified_ns").get<std::int64_t>();
      entry.stamp.changed_ns = f.at("changed_ns").get<std::int64_t>();
      auto digest = digest_from_hex(f.at("sha256").get<std::string>());
      if (!digest) return {};
      entry.hash = FileHash{*digest, entry.stamp.size, f.value("git_sha1", std::string())};
      if (!entry.hash.git_sha1.empty() && !is_lower_hex(entry.hash.git_sha1, 40)) return {};
      out.emplace(f.at("path").get<std::string>(), entry);
    }
  } catch (const nlohmann::json::exception&) {
    return {};
  }
  return out;
}

constexpr std::string_view kStampFolder = "verified";

std::string stamp_json(const std::filesystem::path& dir, const Files& files) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [path, entry] : files) {
    nlohmann::json file = {{"path", path.string()},
                           {"device", entry.stamp.device},
                           {"inode", entry.stamp.inode},
                           {"size", entry.stamp.size},
                           {"modified_ns", entry.stamp.modified_ns},
                           {"changed_ns", entry.stamp.changed_ns},
                           {"sha256", to_hex(entry.hash.digest)}};
    if (!entry.hash.git_sha1.empty()) file["git_sha1"] = entry.hash.git_sha1;
    list.push_back(std::move(file));
  }
  return nlohmann::json{{"dir", dir.string()}, {"files", list}}.dump(1) + "\n";
}

}  // namespace

std::optional<Files> VerifiedDirs::find(const std::filesystem::path& dir) const {
  std::lock_guard lock(mutex_);
  const auto it = dirs_.find(dir);
  return it == dirs_.end() ? std::nullopt : std::optional(it->second.files);
}

bool VerifiedDirs::written(const std::filesystem::path& dir, const Files& files,
                           const std::filesystem::path& stamp_file) const {
  std::lock_guard lock(mutex_);
  const auto it = dirs_.find(dir);
  return it != dirs_.end() && it->second.written_to == stamp_file && it->second.files == files;
}

void VerifiedDirs::keep(const std::filesystem::path& dir, Files files,
                        std::optional<std::filesystem::path> written_to) {
  std::lock_guard lock(mutex_);
  dirs_.insert_or_assign(dir, Record{std::move(files), std::move(written_to)});
}

VerificationStamps::VerificationStamps(std::optional<std::filesystem::path> state_dir, VerifiedDirs* in_memory,
                                       std::chrono::nanoseconds racy_window, std::shared_ptr<const Clock> clock)
    : state_dir_(std::move(state_dir)), in_memory_(in_memory), racy_window_(racy_window), clock_(std::move(clock)) {}

std::optional<std::filesystem::path> VerificationStamps::stamp_file(const std::filesystem::path& variant_dir) const {
  if (!state_dir_) return std::nullopt;
  return *state_dir_ / kStampFolder / (name_hash(canonical_or_same(variant_dir).string()) + ".json");
}

void VerificationStamps::seed(const std::filesystem::path& variant_dir, FileDigests& digests) const {
  const auto dir = canonical_or_same(variant_dir);
  if (in_memory_ != nullptr) {
    if (auto files = in_memory_->find(dir)) {
      for (const auto& [path, entry] : *files) digests.remember(path, entry);
      return;
    }
  }
  if (auto file = stamp_file(dir)) {
    Files files = read_stamp_file(*file, dir);
    for (const auto& [path, entry] : files) digests.remember(path, entry);
    // What the file holds is written: a load that verifies exactly this writes it no more (a warm
    // load in a new process: no temporary file, no fsync).
    if (in_memory_ != nullptr && !files.empty()) in_memory_->keep(dir, std::move(files), *file);
  }
}

void VerificationStamps::record(const std::filesystem::path& variant_dir, const FileDigests& digests) const {
  const auto dir = canonical_or_same(variant_dir);
  // Keyed by canonical path: in a cache snapshot, the blobs the variant's links point at.
  const Files& files = digests.used();
  const auto file = stamp_file(dir);
  // A repeated load of unchanged files: its stamp file already says all of it.
  if (in_memory_ != nullptr && file && in_memory_->written(dir, files, *file)) return;
  // Racily clean entries are not written (as git does): a file changed within the file system's
  // timestamp granularity of its hashing could be changed again without moving its times. Such a
  // file is hashed once more by a later process, then recorded.
  const auto now_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(clock_->wall_now().time_since_epoch()).count();
  Files settled;
  for (const auto& [path, entry] : files) {
    if (std::max(entry.stamp.changed_ns, entry.stamp.modified_ns) < now_ns - racy_window_.count()) {
      settled.emplace(path, entry);
    }
  }
  bool written_in_full = false;
  if (file && !settled.empty()) {
    // Best effort: a miss only costs a hash.
    const bool written = state_subdir(*state_dir_, kStampFolder) &&
                         write_file_atomic(*file, stamp_json(dir, settled), {.mode = 0600}).has_value();
    written_in_full = written && settled.size() == files.size();
  }
  if (in_memory_ != nullptr) in_memory_->keep(dir, files, written_in_full ? file : std::nullopt);
}

void remember_downloaded(const std::map<std::filesystem::path, FileHash>& hashes, FileDigests& digests) {
  for (const auto& [path, hash] : hashes) {
    const auto canonical = canonical_or_same(path);
    if (auto stamp = FileStamp::of(canonical); stamp && stamp->size == hash.size) {
      digests.remember(canonical, {*stamp, hash});
    }
  }
}

}  // namespace kernelhub
