// The conventions of both commands (tools/common/cli_app.hpp): what bad usage exits with, what
// --help lists, how values are read. The commands themselves are run by tests/python.
#include "cli_app.hpp"

#include "cli_words.hpp"
#include "kernelhub/fetch/internal/problem.hpp"

#include <catch2/catch.hpp>
#include <vector>

namespace kernelhub::cli {
namespace {

// A command like the real ones: a positional, a value option, a flag, two that exclude each other.
struct Fixture {
  CLI::App app{"Does a thing.", "tool"};
  CLI::App* sub = nullptr;
  std::string repo;
  std::optional<int> version;
  std::optional<std::string> revision;
  bool json = false;

  Fixture() {
    apply_conventions(app);
    app.require_subcommand(1);
    sub = &add_command(app, "run", "run the thing");
    sub->description("Runs the thing, at length.");
    sub->add_option("ORG/NAME", repo, "the repo")->required();
    auto* v = sub->add_option("--version", version, "major version")->option_text("N")->transform(whole_number());
    auto* r = sub->add_option("--revision", revision, "branch, tag or commit")->option_text("R");
    v->excludes(r);
    sub->add_flag("--json", json, "print JSON");
  }

  std::optional<int> parse(std::vector<const char*> args) {
    args.insert(args.begin(), "tool");
    return cli::parse(app, static_cast<int>(args.size()), args.data());
  }
};

TEST_CASE("values: --opt V and --opt=V, the last one wins, decimal whole numbers only") {
  Fixture f;
  REQUIRE(f.parse({"run", "acme/x", "--version", "3", "--version=007", "--json"}) == std::nullopt);
  CHECK(f.repo == "acme/x");
  CHECK(f.version == std::optional<int>(7));  // not octal
  CHECK(f.json);
  CHECK(f.app.get_subcommands().front() == f.sub);
}

TEST_CASE("bad usage exits 2, CLI11's own errors included; --help exits 0") {
  for (const std::vector<const char*>& args : {std::vector<const char*>{},
                                               {"run"},
                                               {"run", "a/b", "--bogus"},
                                               {"run", "a/b", "c/d"},
                                               {"run", "a/b", "--version", "-1"},
                                               {"run", "a/b", "--version", "x"},
                                               {"run", "a/b", "--json=1"},
                                               {"run", "a/b", "--version", "1", "--revision", "main"},
                                               {"run", "a/b", "--version"}}) {
    Fixture f;
    std::string joined;
    for (const char* a : args) joined += std::string(a) + " ";
    INFO(joined);
    CHECK(f.parse(args) == std::optional<int>(kExitUsage));
  }
  Fixture f;
  CHECK(f.parse({"run", "--help"}) == std::optional<int>(kExitOk));
  Fixture g;
  CHECK(g.parse({"run", "-h", "--bogus"}) == std::optional<int>(kExitOk));
}

TEST_CASE("help: usage first, the description, every option with its description and constraints") {
  Fixture f;
  REQUIRE(f.parse({"run", "a/b"}) == std::nullopt);
  const std::string help = f.app.help();
  CHECK(help.starts_with("usage: tool run [OPTIONS] ORG/NAME\n"));
  CHECK(help.find("Runs the thing, at length.") != std::string::npos);
  for (const char* line : {"ORG/NAME", "the repo", "-h,--help", "--version N", "major version (not with --revision)",
                           "--revision R", "--json", "print JSON"}) {
    INFO(line);
    CHECK(help.find(line) != std::string::npos);
  }
  Fixture g;
  const std::string top = g.app.help();
  CHECK(top.find("run the thing") != std::string::npos);  // the summary, not the description
  CHECK(top.find("at length") == std::string::npos);
}

// A fetch's message spells the request for a C++ caller; the CLI spells it in its options
// (cli_words.hpp), from the same value (tests/fetch/transport_test.cpp checks the fetch gives it).
TEST_CASE("the CLI says what to give in its own options, never C++") {
  const NoVersionGiven unversioned{"acme/mish", std::vector<std::string>{"v1"}};
  const Error error = problem_error(
      ErrorCode::kInvalidArgument, unversioned.message("Write get_kernel(\"acme/mish\", {.version = 1})"), unversioned);
  const std::string said = cli_message(error);
  CHECK_THAT(said, Catch::Contains("available versions: v1") && Catch::EndsWith("Give --version 1 (or --revision R)"));
  CHECK(said.find("{.") == std::string::npos);

  const NotCachedOffline offline{"acme/mish", 1, "", "/cache/hub", {}};
  const std::string offline_said =
      cli_message(problem_error(ErrorCode::kOfflineMiss, "-", offline).with_context("got"));
  CHECK_THAT(offline_said, Catch::StartsWith("got: Version 1 of 'acme/mish' is not available in the local cache") &&
                               Catch::Contains("(--revision <commit>)") &&
                               Catch::EndsWith("the cache at `/cache/hub` holds nothing for this repo."));
  CHECK(offline_said.find("{.") == std::string::npos);
  CHECK(cli_message(Error{ErrorCode::kNotFound, "as it is"}) == "as it is");
}

}  // namespace
}  // namespace kernelhub::cli
