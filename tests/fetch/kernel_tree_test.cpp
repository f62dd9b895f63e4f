// fetch_kernel_tree on local kernels: dependencies through LOCAL_KERNELS, their order, a diamond,
// a cycle and a missing dependency (the Hub's side: tests/python/test_kernel_depends.py).
#include "kernelhub/fetch/internal/kernel_tree.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kernelhub/resolver/environment.hpp"
#include "kernels_words.hpp"
#include "support/temp_dir.hpp"

namespace kernelhub {
namespace {

// A pure-Python kernel (torch-universal) at `dir` whose metadata.json depends on `depends`.
void write_kernel(const std::filesystem::path& dir, const std::string& name, const std::vector<std::string>& depends) {
  const auto variant = dir / "build" / "torch-universal";
  std::filesystem::create_directories(variant);
  std::ofstream(variant / "__init__.py") << "\n";
  nlohmann::json kernel_depends = nlohmann::json::array();
  for (const auto& repo : depends) kernel_depends.push_back({{"repo-id", repo}, {"version", 1}});
  const nlohmann::json metadata{{"name", name},
                                {"id", "_" + name + "_universal_0000000"},
                                {"version", 1},
                                {"license", "Apache-2.0"},
                                {"python-depends", nlohmann::json::array()},
                                {"kernel-depends", kernel_depends},
                                {"backend", {{"type", "cpu"}}}};
  std::ofstream(variant / "metadata.json") << metadata.dump(2);
}

struct Kernels {
  testing::TempDir tmp{"kernel-tree"};
  std::string local_kernels;

  std::filesystem::path add(const std::string& name, const std::vector<std::string>& depends) {
    const auto dir = tmp.path() / name;
    write_kernel(dir, name, depends);
    local_kernels += (local_kernels.empty() ? "" : ":") + std::string("acme/") + name + "=" + dir.string();
    return dir;
  }

  Result<KernelTree> fetch(const std::string& name) const {
    const auto env = map_environment({{"LOCAL_KERNELS", local_kernels}});
    FetchRequest request;
    request.source = tmp.path() / name;
    request.loadable = resolver::Loadable::python_process();
    // A CPU torch on a machine without GPUs: torch-universal runs anywhere.
    const resolver::TorchRuntime torch{resolver::Version{2, 15}, true, {}};
    const auto environment =
        resolver::Environment::detect(torch, map_environment({{"KERNELHUB_BACKEND", "cpu"}, {"KERNELHUB_GPUS", ""}}))
            .value();
    return fetch_kernel_tree(request, FetchContext{environment, env, nullptr},
                             KernelDependency{"acme/" + name, 1, std::nullopt});
  }
};

std::vector<std::string> names(const KernelTree& tree) {
  std::vector<std::string> out;
  for (const auto& node : tree.nodes) out.push_back(node.name);
  return out;
}

TEST_CASE("a kernel's dependencies come first, each after its own") {
  Kernels kernels;
  kernels.add("ka", {"acme/kb"});
  kernels.add("kb", {"acme/kc"});
  kernels.add("kc", {});
  const auto tree = kernels.fetch("ka");
  REQUIRE(tree.has_value());
  CHECK(names(*tree) == std::vector<std::string>{"acme/kc", "acme/kb", "acme/ka"});
  CHECK(tree->root().dependencies == std::vector<std::size_t>{1});
  CHECK(tree->nodes[1].dependencies == std::vector<std::size_t>{0});
  CHECK(tree->nodes[0].fetched.metadata.name == "kc");
  CHECK(tree->nodes[1].wanted == KernelDependency{"acme/kb", 1, std::nullopt});
}

TEST_CASE("a kernel two others depend on is fetched once") {
  Kernels kernels;
  kernels.add("ka", {"acme/kb", "acme/kc"});
  kernels.add("kb", {"acme/kc"});
  kernels.add("kc", {});
  const auto tree = kernels.fetch("ka");
  REQUIRE(tree.has_value());
  CHECK(names(*tree) == std::vector<std::string>{"acme/kc", "acme/kb", "acme/ka"});
  CHECK(tree->root().dependencies == std::vector<std::size_t>{1, 0});
}

TEST_CASE("a cycle is kDependencyCycle naming the chain, in both wordings") {
  Kernels kernels;
  kernels.add("ka", {"acme/kb"});
  kernels.add("kb", {"acme/kc"});
  kernels.add("kc", {"acme/ka"});
  const auto tree = kernels.fetch("ka");
  REQUIRE_FALSE(tree.has_value());
  CHECK(tree.error().code == ErrorCode::kDependencyCycle);
  CHECK_THAT(tree.error().message,
             Catch::StartsWith("kernel dependency cycle: acme/ka -> acme/kb -> acme/kc -> acme/ka"));
  CHECK(kernels_words::message(tree.error()) ==
        "Cyclic kernel dependency detected: acme/ka (acme/ka -> acme/kb -> acme/kc -> acme/ka)");

  Kernels self;
  self.add("ks", {"acme/ks"});
  const auto own = self.fetch("ks");
  REQUIRE_FALSE(own.has_value());
  CHECK_THAT(own.error().message, Catch::Contains("acme/ks -> acme/ks"));
}

TEST_CASE("a dependency that cannot be fetched keeps its code, with the chain that led to it") {
  Kernels kernels;
  kernels.add("ka", {"acme/kb"});
  kernels.add("kb", {"acme/gone"});
  // LOCAL_KERNELS names a directory that is not there.
  kernels.local_kernels += ":acme/gone=" + (kernels.tmp.path() / "gone").string();
  const auto tree = kernels.fetch("ka");
  REQUIRE_FALSE(tree.has_value());
  CHECK(tree.error().code == ErrorCode::kNotFound);
  CHECK_THAT(tree.error().message, Catch::StartsWith("kernel dependency acme/ka -> acme/kb -> acme/gone: "));
  CHECK_THAT(tree.error().message, Catch::Contains("does not exist"));
}

TEST_CASE("a dependency that is not an org/name is refused with the chain") {
  Kernels kernels;
  kernels.add("ka", {"not a repo"});
  const auto tree = kernels.fetch("ka");
  REQUIRE_FALSE(tree.has_value());
  CHECK(tree.error().code == ErrorCode::kInvalidArgument);
  CHECK_THAT(tree.error().message, Catch::StartsWith("kernel dependency acme/ka -> not a repo: "));
}

}  // namespace
}  // namespace kernelhub
