#include "kernelhub/client/internal/settings.hpp"

#include <catch2/catch.hpp>
#include <fstream>

#include "test_support.hpp"

using namespace kernelhub;
using namespace kernelhub::client;

TEST_CASE("Settings: default roots follow HOME, then XDG_CACHE_HOME, then HF_HOME") {
  auto s = Settings::from_env(map_environment({{"HOME", "/home/u"}}));
  REQUIRE(s);
  CHECK(s->hf_home == "/home/u/.cache/huggingface");
  CHECK(s->hub_cache == "/home/u/.cache/huggingface/hub");
  CHECK(s->endpoint == "https://huggingface.co");
  CHECK_FALSE(s->offline);
  CHECK(s->cache_dir(RepoType::kKernel) == s->hub_cache);

  s = Settings::from_env(map_environment({{"HOME", "/home/u"}, {"XDG_CACHE_HOME", "/x"}}));
  CHECK(s->hf_home == "/x/huggingface");
  s = Settings::from_env(map_environment({{"HOME", "/home/u"}, {"XDG_CACHE_HOME", "/x"}, {"HF_HOME", "~/hf"}}));
  CHECK(s->hf_home == "/home/u/hf");
  CHECK(s->hub_cache == "/home/u/hf/hub");
}

TEST_CASE("Settings: HF_HUB_CACHE beats the legacy name; KERNELS_CACHE is for kernels only") {
  auto s = Settings::from_env(
      map_environment({{"HF_HOME", "/h"}, {"HUGGINGFACE_HUB_CACHE", "/legacy"}, {"KERNELS_CACHE", "/k"}}));
  CHECK(s->hub_cache == "/legacy");
  CHECK(s->cache_dir(RepoType::kKernel) == "/k");
  CHECK(s->cache_dir(RepoType::kModel) == "/legacy");
  s = Settings::from_env(map_environment({{"HF_HUB_CACHE", "/new"}, {"HUGGINGFACE_HUB_CACHE", "/legacy"}}));
  CHECK(s->hub_cache == "/new");
}

TEST_CASE("Settings: endpoint, offline, telemetry and timeouts") {
  auto s = Settings::from_env(map_environment({{"HF_ENDPOINT", "http://127.0.0.1:9/"},
                                               {"HF_HUB_OFFLINE", "yes"},
                                               {"DO_NOT_TRACK", "1"},
                                               {"HF_HUB_DOWNLOAD_TIMEOUT", "2.5"},
                                               {"HF_HUB_ETAG_TIMEOUT", "3"},
                                               {"KERNELHUB_MAX_PARALLEL", "4"}}));
  REQUIRE(s);
  CHECK(s->endpoint == "http://127.0.0.1:9");
  CHECK(s->offline);
  CHECK(s->disable_telemetry);
  CHECK(s->read_timeout == std::chrono::milliseconds(2500));
  CHECK(s->api_timeout == std::chrono::milliseconds(3000));
  CHECK(s->max_parallel == 4);
  CHECK(s->user_agent().starts_with("kernelhub/"));
  CHECK(s->user_agent().find("os/") == std::string::npos);

  CHECK_FALSE(Settings::from_env(map_environment({{"HF_HUB_OFFLINE", "0"}}))->offline);
  auto bad = Settings::from_env(map_environment({{"HF_HUB_DOWNLOAD_TIMEOUT", "soon"}}));
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::kInvalidArgument);
  CHECK(bad.error().message == "`HF_HUB_DOWNLOAD_TIMEOUT=soon` is not a positive number of seconds");
  CHECK_FALSE(Settings::from_env(map_environment({{"HF_ENDPOINT", "ftp://x"}})));
  CHECK_FALSE(Settings::from_env(map_environment({{"KERNELHUB_MAX_PARALLEL", "0"}})));
}

TEST_CASE("Settings: token from HF_TOKEN, the legacy name, then the token file") {
  client::testing::TempDir dir;
  { std::ofstream(dir.path() / "token") << "  hf_fromfile\r\n"; }
  const std::string home = dir.path().string();
  auto s = Settings::from_env(map_environment({{"HF_HOME", home}}));
  REQUIRE(s->token);
  CHECK(s->token->value() == "hf_fromfile");
  s = Settings::from_env(map_environment({{"HF_HOME", home}, {"HUGGING_FACE_HUB_TOKEN", "hf_legacy"}}));
  CHECK(s->token->value() == "hf_legacy");
  s = Settings::from_env(
      map_environment({{"HF_HOME", home}, {"HUGGING_FACE_HUB_TOKEN", "hf_legacy"}, {"HF_TOKEN", "hf_new"}}));
  CHECK(s->token->value() == "hf_new");
  s = Settings::from_env(
      map_environment({{"HF_HOME", home}, {"HF_TOKEN", "hf_new"}, {"HF_HUB_DISABLE_IMPLICIT_TOKEN", "1"}}));
  CHECK_FALSE(s->token);
  s = Settings::from_env(map_environment({{"HF_HOME", "/nonexistent"}}));
  CHECK_FALSE(s->token);
  CHECK(Token("hf_abcdefghijklmnop").to_string() == "hf_…mnop");
}

TEST_CASE("Settings: KERNELHUB_FSYNC is on unless set to one of the falsy words") {
  CHECK(Settings::from_env(map_environment({}))->fsync);
  for (const char* off : {"0", "off", "NO", "False"}) {
    INFO(off);
    CHECK_FALSE(Settings::from_env(map_environment({{"KERNELHUB_FSYNC", off}}))->fsync);
  }
  for (const char* on : {"1", "yes", "", "sometimes"}) {
    INFO(on);
    CHECK(Settings::from_env(map_environment({{"KERNELHUB_FSYNC", on}}))->fsync);
  }
}

TEST_CASE("Settings: thread and parallelism counts are whole numbers in range, named when not") {
  const auto s = Settings::from_env(map_environment(
      {{"KERNELHUB_HASH_THREADS", "0"}, {"KERNELHUB_TRANSFER_THREADS", "3"}, {"KERNELHUB_MAX_PARALLEL", "16"}}));
  REQUIRE(s.has_value());
  CHECK(s->hash_threads == 0);
  CHECK(s->transfer_threads == 3);
  CHECK(s->max_parallel == 16);
  CHECK(Settings::from_env(map_environment({}))->transfer_threads == -1);  // by core count
  for (auto [name, value, range] : {std::tuple{"KERNELHUB_TRANSFER_THREADS", "0", "from 1 to 64"},
                                    std::tuple{"KERNELHUB_HASH_THREADS", "65", "from 0 to 64"},
                                    std::tuple{"KERNELHUB_MAX_PARALLEL", "8x", "from 1 to 256"}}) {
    INFO(name << "=" << value);
    const auto bad = Settings::from_env(map_environment({{name, value}}));
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code == ErrorCode::kInvalidArgument);
    CHECK_THAT(bad.error().message, Catch::Contains(std::string(name) + "=" + value) && Catch::Contains(range));
  }
}
