#include "kernelhub/base/internal/state_dir.hpp"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "kernelhub/base/internal/name_hash.hpp"
#include "support/temp_dir.hpp"

namespace kernelhub {
namespace {

TEST_CASE("the state directory comes from KERNELHUB_STATE_DIR, XDG_STATE_HOME or HOME") {
  CHECK(state_dir_from(map_environment({{"KERNELHUB_STATE_DIR", "/s"}, {"HOME", "/h"}})) ==
        std::filesystem::path("/s"));
  CHECK(state_dir_from(map_environment({{"XDG_STATE_HOME", "/x"}, {"HOME", "/h"}})) ==
        std::filesystem::path("/x/kernelhub"));
  CHECK(state_dir_from(map_environment({{"HOME", "/h"}})) == std::filesystem::path("/h/.local/state/kernelhub"));
  CHECK(state_dir_from(map_environment({{"KERNELHUB_STATE_DIR", ""}, {"HOME", "/h"}})) ==
        std::filesystem::path("/h/.local/state/kernelhub"));
  CHECK_FALSE(state_dir_from(map_environment({})).has_value());
}

TEST_CASE("a state folder is made the user's own, the state directory with it") {
  testing::TempDir root("state_dir");
  const auto state = root.path() / "state";
  const auto made = state_subdir(state, "gpus");
  REQUIRE(made == state / "gpus");
  for (const auto& dir : {state, state / "gpus"}) {
    struct stat st {};
    REQUIRE(::stat(dir.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
  }
  CHECK(state_subdir(state, "gpus") == made);  // there already: found, not an error
  std::ofstream(root.path() / "file") << "";
  CHECK_FALSE(state_subdir(root.path() / "file", "gpus").has_value());  // under a file: cannot be made
}

TEST_CASE("name_hash: 32 hex digits, the same for the same text, different for texts that differ") {
  const std::string a = name_hash("/cache/models--a/snapshots/x"), b = name_hash("/cache/models--a/snapshots/y");
  CHECK(a.size() == 32);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(a == name_hash("/cache/models--a/snapshots/x"));
  CHECK(a != b);
  CHECK(name_hash("ab") != name_hash("ba"));
  CHECK(name_hash("") == "cbf29ce4842223256c62272e07bb0142");  // the two seeds: nothing hashed
}

}  // namespace
}  // namespace kernelhub
