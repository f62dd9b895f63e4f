#include "kernelhub/fetch/internal/verification_stamps.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

namespace kernelhub {
namespace {

std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("kh_stamps_" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void write(const std::filesystem::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

// Verifies every file of `dir` through `digests` (what a fetch's checks do).
void hash_all(const std::filesystem::path& dir, FileDigests& digests) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) REQUIRE(digests.hash(entry.path()).has_value());
}

TEST_CASE("a later process trusts a verification stamp only while every file is unchanged") {
  const auto root = fresh_dir("later");
  const auto variant = root / "variant";
  std::filesystem::create_directories(variant);
  write(variant / "_ops.so", std::string(100000, 'x'));
  write(variant / "metadata.json", "{}");
  const VerificationStamps stamps(root / "state", /*in_memory=*/nullptr, /*racy_window=*/std::chrono::seconds(0));

  FileDigests first;
  stamps.seed(variant, first);
  hash_all(variant, first);
  CHECK(first.bytes_read() == 100002);
  stamps.record(variant, first);
  REQUIRE(stamps.stamp_file(variant).has_value());
  CHECK(std::filesystem::exists(*stamps.stamp_file(variant)));
  CHECK((std::filesystem::status(*stamps.stamp_file(variant)).permissions() & std::filesystem::perms::others_read) ==
        std::filesystem::perms::none);

  SECTION("unchanged: no byte is read, and the hashes are the recorded ones") {
    FileDigests again;
    stamps.seed(variant, again);
    hash_all(variant, again);
    CHECK(again.bytes_read() == 0);
    CHECK(again.sha256(variant / "_ops.so").value() == first.sha256(variant / "_ops.so").value());
  }
  SECTION("a file rewritten with the same size is read again and hashes to its new content") {
    const Sha256Digest before = first.sha256(variant / "_ops.so").value();
    write(variant / "_ops.so", std::string(100000, 'y'));
    FileDigests again;
    stamps.seed(variant, again);
    hash_all(variant, again);
    CHECK(again.bytes_read() == 100000);
    CHECK(again.sha256(variant / "_ops.so").value() != before);
  }
  SECTION("a stamp file that is malformed or names another directory is ignored") {
    for (const std::string& text : {std::string("not json"), std::string("{\"dir\": \"/elsewhere\", \"files\": []}")}) {
      write(*stamps.stamp_file(variant), text);
      FileDigests again;
      stamps.seed(variant, again);
      hash_all(variant, again);
      CHECK(again.bytes_read() == 100002);
    }
  }
  SECTION("without a state directory nothing is written and nothing is trusted across processes") {
    const VerificationStamps none(std::nullopt, /*in_memory=*/nullptr);
    CHECK_FALSE(none.stamp_file(variant).has_value());
    FileDigests again;
    none.seed(variant, again);
    hash_all(variant, again);
    CHECK(again.bytes_read() == 100002);
  }
}

TEST_CASE("in one process a verified directory is not hashed again, unless a file changed") {
  const auto root = fresh_dir("process");
  write(root / "lib.so", "abc");
  VerifiedDirs in_memory;
  const VerificationStamps stamps(std::nullopt, &in_memory);
  FileDigests first;
  stamps.seed(root, first);
  hash_all(root, first);
  stamps.record(root, first);
  FileDigests again;
  stamps.seed(root, again);
  hash_all(root, again);
  CHECK(again.bytes_read() == 0);
  write(root / "lib.so", "abd");
  FileDigests changed;
  stamps.seed(root, changed);
  hash_all(root, changed);
  CHECK(changed.bytes_read() == 3);
}

TEST_CASE("a repeated record of unchanged files leaves the stamp file that holds it alone") {
  const auto root = fresh_dir("repeated");
  const auto variant = root / "variant";
  std::filesystem::create_directories(variant);
  write(variant / "_ops.so", "abc");
  VerifiedDirs in_memory;
  const VerificationStamps stamps(root / "state", &in_memory, /*racy_window=*/std::chrono::seconds(0));
  FileDigests first;
  hash_all(variant, first);
  stamps.record(variant, first);
  const auto file = stamps.stamp_file(variant).value();
  REQUIRE(std::filesystem::exists(file));
  std::filesystem::remove(file);  // so that a write would show

  FileDigests again;
  stamps.seed(variant, again);
  hash_all(variant, again);
  stamps.record(variant, again);
  CHECK_FALSE(std::filesystem::exists(file));

  write(variant / "_ops.so", "abd");
  FileDigests changed;
  stamps.seed(variant, changed);
  hash_all(variant, changed);
  stamps.record(variant, changed);
  CHECK(std::filesystem::exists(file));
}

TEST_CASE("a later process that verifies what the stamp file holds does not write it again") {
  const auto root = fresh_dir("later-unchanged");
  const auto variant = root / "variant";
  std::filesystem::create_directories(variant);
  write(variant / "_ops.so", "abc");
  write(variant / "__init__.py", "x");
  const auto verify = [&](const VerificationStamps& stamps, bool remove_after_seed) {
    FileDigests digests;
    stamps.seed(variant, digests);
    if (remove_after_seed) std::filesystem::remove(*stamps.stamp_file(variant));  // a write would show
    hash_all(variant, digests);
    stamps.record(variant, digests);
    return digests.bytes_read();
  };
  VerifiedDirs first_process;
  CHECK(verify(VerificationStamps(root / "state", &first_process, std::chrono::seconds(0)), false) == 4);
  const auto file = VerificationStamps(root / "state", nullptr).stamp_file(variant).value();
  REQUIRE(std::filesystem::exists(file));

  // A new process, the files unchanged: trusted from the file, which is not written again.
  VerifiedDirs later_process;
  const VerificationStamps later(root / "state", &later_process, std::chrono::seconds(0));
  CHECK(verify(later, /*remove_after_seed=*/true) == 0);
  CHECK_FALSE(std::filesystem::exists(file));
  // A file that changed since is hashed, and the record written again.
  write(variant / "_ops.so", "abd");
  CHECK(verify(later, false) == 3);
  CHECK(std::filesystem::exists(file));
}

TEST_CASE("a file changed just before its verification was recorded goes to no stamp file") {
  const auto root = fresh_dir("racy");
  const auto variant = root / "variant";
  std::filesystem::create_directories(variant);
  write(variant / "_ops.so", "fresh");
  const VerificationStamps stamps(root / "state", /*in_memory=*/nullptr);  // the 2 s window
  FileDigests first;
  hash_all(variant, first);
  stamps.record(variant, first);
  FileDigests again;
  stamps.seed(variant, again);
  hash_all(variant, again);
  CHECK(again.bytes_read() == 5);
}

TEST_CASE("the same file, recorded once the clock has moved past the 2 s window, goes to the stamp file") {
  const auto root = fresh_dir("settled");
  const auto variant = root / "variant";
  std::filesystem::create_directories(variant);
  write(variant / "_ops.so", "fresh");
  auto clock = std::make_shared<ManualClock>();
  const VerificationStamps stamps(root / "state", /*in_memory=*/nullptr, VerificationStamps::kRacyWindow, clock);
  FileDigests first;
  hash_all(variant, first);
  clock->advance(std::chrono::milliseconds(1900));  // still inside the window: nothing written
  stamps.record(variant, first);
  CHECK_FALSE(std::filesystem::exists(*stamps.stamp_file(variant)));
  clock->advance(std::chrono::milliseconds(200));  // 2.1 s after the file was written, without waiting
  stamps.record(variant, first);
  FileDigests again;
  stamps.seed(variant, again);
  hash_all(variant, again);
  CHECK(again.bytes_read() == 0);
}

}  // namespace
}  // namespace kernelhub
