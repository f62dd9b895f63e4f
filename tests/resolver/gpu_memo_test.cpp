#include "kernelhub/resolver/internal/gpu_memo.hpp"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "kernelhub/base/internal/read_file.hpp"
#include "support/temp_dir.hpp"

namespace kernelhub::resolver {
namespace {

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

// A machine of its own: a boot id file, a /dev with two GPU nodes, and a state directory.
struct FakeMachine {
  testing::TempDir root{"gpu_memo"};
  std::filesystem::path boot = root.path() / "boot_id";
  std::filesystem::path dev = root.path() / "dev";
  std::filesystem::path state = root.path() / "state";

  FakeMachine() {
    write(boot, "6f1c8e0a-0000-4000-8000-000000000001\n");
    std::filesystem::create_directories(dev);
    write(dev / "nvidia0", "");
    write(dev / "nvidiactl", "");
    write(dev / "null", "");
  }
  GpuMemo memo(std::optional<std::string> visible = std::nullopt) const {
    return GpuMemo(state, GpuMemoSources{boot, dev, std::move(visible)});
  }
};

const Version kDriver{13, 0};

TEST_CASE("the GPUs kept for a key are recalled under exactly that key") {
  FakeMachine machine;
  const GpuMemo memo = machine.memo();
  const auto key = memo.key_for(kDriver);
  REQUIRE(key);
  CHECK(key->find("boot=6f1c8e0a-0000-4000-8000-000000000001\n") == 0);
  CHECK(key->find("driver=13.0\n") != std::string::npos);
  CHECK(key->find("node=nvidia0 ") != std::string::npos);
  CHECK(key->find("node=null") == std::string::npos);  // only the NVIDIA nodes
  CHECK_FALSE(memo.recall(*key).has_value());          // nothing kept yet

  memo.keep(*key, {{9, 0}, {8, 0}});
  const auto again = machine.memo().recall(*machine.memo().key_for(kDriver));  // another process
  REQUIRE(again);
  REQUIRE(again->size() == 2);
  CHECK(again->at(0).to_string() == "9.0");
  CHECK(again->at(1).to_string() == "8.0");
  // The state directory is the user's own.
  struct stat st {};
  REQUIRE(::stat((machine.state / "gpus").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
}

TEST_CASE("no GPUs is kept and recalled as an empty list, not as a miss") {
  FakeMachine machine;
  const GpuMemo memo = machine.memo("");
  const auto key = *memo.key_for(kDriver);
  memo.keep(key, {});
  const auto recalled = memo.recall(key);
  REQUIRE(recalled);
  CHECK(recalled->empty());
}

TEST_CASE("whatever changes the answer changes the key: the boot, the driver, the nodes, CUDA_VISIBLE_DEVICES") {
  FakeMachine machine;
  const GpuMemo memo = machine.memo();
  const auto key = *memo.key_for(kDriver);
  memo.keep(key, {{9, 0}});

  CHECK(*memo.key_for(Version{13, 1}) != key);
  CHECK(*machine.memo("1").key_for(kDriver) != key);
  CHECK(*machine.memo("").key_for(kDriver) != key);  // set but empty is not unset

  SECTION("a reboot") {
    write(machine.boot, "6f1c8e0a-0000-4000-8000-000000000002\n");
    const auto rebooted = *memo.key_for(kDriver);
    CHECK(rebooted != key);
    CHECK_FALSE(memo.recall(rebooted).has_value());
  }
  SECTION("another GPU's node") {
    write(machine.dev / "nvidia1", "");
    CHECK(*memo.key_for(kDriver) != key);
  }
  SECTION("a node made again (a driver reload): another inode") {
    write(machine.dev / "nvidia0.new", "");
    std::filesystem::rename(machine.dev / "nvidia0.new", machine.dev / "nvidia0");
    CHECK(*memo.key_for(kDriver) != key);
  }
}

TEST_CASE("a file that is not exactly what keep wrote is a miss") {
  FakeMachine machine;
  const GpuMemo memo = machine.memo();
  const auto key = *memo.key_for(kDriver);
  memo.keep(key, {{9, 0}});
  std::filesystem::path file;
  for (const auto& entry : std::filesystem::directory_iterator(machine.state / "gpus")) file = entry.path();
  REQUIRE(!file.empty());
  const std::string good = *read_file(file);
  REQUIRE(good.ends_with("gpus=9.0\n"));
  for (const std::string& bad :
       {std::string(""), good.substr(0, good.size() - 1), good.substr(0, good.size() - 9) + "gpus=9\n",
        good.substr(0, good.size() - 9) + "gpus=9.0,\n", good.substr(0, good.size() - 9) + "gpus=9.x\n",
        good.substr(0, good.size() - 9) + "gpus=-1.0\n", "x" + good}) {
    INFO(bad);
    write(file, bad);
    CHECK_FALSE(memo.recall(key).has_value());
  }
  write(file, good);
  CHECK(memo.recall(key).has_value());
}

TEST_CASE("without a state directory or a boot id nothing is kept") {
  FakeMachine machine;
  CHECK_FALSE(GpuMemo().key_for(kDriver).has_value());
  std::filesystem::remove(machine.boot);
  CHECK_FALSE(machine.memo().key_for(kDriver).has_value());
  CHECK_FALSE(machine.memo("0\n1").key_for(kDriver).has_value());  // a value on two lines
}

TEST_CASE("the memo's files of long ago are removed when one is written") {
  FakeMachine machine;
  const GpuMemo memo = machine.memo();
  std::filesystem::create_directories(machine.state / "gpus");
  const auto old = machine.state / "gpus" / "0123456789abcdef0123456789abcdef";
  const auto recent = machine.state / "gpus" / "fedcba9876543210fedcba9876543210";
  write(old, "kernelhub gpus 1\n");
  write(recent, "kernelhub gpus 1\n");
  std::filesystem::last_write_time(old, std::filesystem::file_time_type::clock::now() - std::chrono::hours(24 * 31));
  memo.keep(*memo.key_for(kDriver), {{9, 0}});
  CHECK_FALSE(std::filesystem::exists(old));
  CHECK(std::filesystem::exists(recent));
}

}  // namespace
}  // namespace kernelhub::resolver
