// walk_kernel_tree with a visitor over a table of kernels: the order it enters and leaves them,
// a diamond entered once, the chain on a dependency's error and on a cycle (what fetch_kernel_tree
// and `kernelhub download` both rely on; kernel_tree_test.cpp tests the fetch on top).
#include "kernelhub/fetch/internal/kernel_walk.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "kernels_words.hpp"

namespace kernelhub {
namespace {

KernelDependency kernel(const std::string& name) {
  return KernelDependency{"acme/" + name, 1, std::nullopt};
}

// Kernels by repo id, each with the repo ids it depends on; records what the walk did.
struct TableVisitor : KernelWalkVisitor {
  std::map<std::string, std::vector<std::string>> depends;
  std::map<std::string, Error> fails;
  std::vector<std::string> entered;
  std::vector<std::string> left;  // "name<needed_by:places"

  Result<std::vector<KernelDependency>> enter(const KernelDependency& k) override {
    entered.push_back(k.repo_id);
    if (auto it = fails.find(k.repo_id); it != fails.end()) return unexpected(it->second);
    std::vector<KernelDependency> out;
    for (const auto& name : depends[k.repo_id]) out.push_back(KernelDependency{name, 1, std::nullopt});
    return out;
  }
  void leave(const KernelDependency& k, const KernelDependency* needed_by, std::vector<std::size_t> places) override {
    std::string text = k.repo_id + "<" + (needed_by ? needed_by->repo_id : "-") + ":";
    for (std::size_t place : places) text += std::to_string(place);
    left.push_back(text);
  }
};

TEST_CASE("each kernel is left after those it depends on, and a diamond is entered once") {
  TableVisitor visitor;
  visitor.depends = {{"acme/a", {"acme/b", "acme/c"}}, {"acme/b", {"acme/d"}}, {"acme/c", {"acme/d"}}};
  const auto root = walk_kernel_tree(kernel("a"), visitor);
  REQUIRE(root.has_value());
  CHECK(*root == 3);
  CHECK(visitor.entered == std::vector<std::string>{"acme/a", "acme/b", "acme/d", "acme/c"});
  CHECK(visitor.left ==
        std::vector<std::string>{"acme/d<acme/b:", "acme/b<acme/a:0", "acme/c<acme/a:0", "acme/a<-:12"});
}

TEST_CASE("a cycle names the chain, in the same words for the CLI and the C++ API, and in kernels'") {
  TableVisitor visitor;
  visitor.depends = {{"acme/a", {"acme/b"}}, {"acme/b", {"acme/a"}}};
  const auto root = walk_kernel_tree(kernel("a"), visitor);
  REQUIRE_FALSE(root.has_value());
  CHECK(root.error().code == ErrorCode::kDependencyCycle);
  CHECK_THAT(root.error().message, Catch::StartsWith("kernel dependency cycle: acme/a -> acme/b -> acme/a. "));
  CHECK(kernels_words::message(root.error()) ==
        "Cyclic kernel dependency detected: acme/a (acme/a -> acme/b -> acme/a)");
}

TEST_CASE("a dependency's error keeps its code, prefixed with the chain, and the first kernel's is its own") {
  TableVisitor visitor;
  visitor.depends = {{"acme/a", {"acme/b"}}, {"acme/b", {"acme/c"}}};
  visitor.fails.emplace("acme/c", Error{ErrorCode::kNotFound, "no such repo"});
  const auto deep = walk_kernel_tree(kernel("a"), visitor);
  REQUIRE_FALSE(deep.has_value());
  CHECK(deep.error().code == ErrorCode::kNotFound);
  CHECK_THAT(deep.error().message, Catch::StartsWith("kernel dependency acme/a -> acme/b -> acme/c: "));
  CHECK_THAT(deep.error().message, Catch::EndsWith("no such repo"));

  visitor.fails.emplace("acme/a", Error{ErrorCode::kNotFound, "no such repo"});
  const auto first = walk_kernel_tree(kernel("a"), visitor);
  REQUIRE_FALSE(first.has_value());
  CHECK(first.error().message == "no such repo");
}

}  // namespace
}  // namespace kernelhub
