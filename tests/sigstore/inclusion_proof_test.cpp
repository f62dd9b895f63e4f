#include "kernelhub/sigstore/internal/inclusion_proof.hpp"

#include <catch2/catch.hpp>

#include "test_instance.hpp"

namespace kernelhub::sigstore {
namespace {

TEST_CASE("every leaf of every tree up to 33 leaves proves its inclusion, and only its own") {
  for (std::int64_t size = 1; size <= 33; ++size) {
    for (std::int64_t index = 0; index < size; ++index) {
      const auto tree = testing::merkle_fixture("the entry", index, size);
      const std::string leaf = merkle_leaf_hash("the entry");
      INFO("leaf " << index << " of " << size);
      REQUIRE(verify_inclusion(leaf, index, size, tree.path, tree.root));
      // Another index, another leaf: each fails. (The tree size is bound by the checkpoint, which
      // commits to it beside the root hash: checkpoint_test.cpp.)
      if (size > 1) CHECK_FALSE(verify_inclusion(leaf, (index + 1) % size, size, tree.path, tree.root));
      CHECK_FALSE(verify_inclusion(merkle_leaf_hash("another entry"), index, size, tree.path, tree.root));
    }
  }
}

TEST_CASE("a proof with a flipped bit, a hash too many or too few, or an index outside the tree is refused") {
  const auto tree = testing::merkle_fixture("entry", 5, 11);
  const std::string leaf = merkle_leaf_hash("entry");
  REQUIRE(verify_inclusion(leaf, 5, 11, tree.path, tree.root));
  auto flipped = tree.path;
  flipped[1][7] = static_cast<char>(flipped[1][7] ^ 0x04);
  auto refused = verify_inclusion(leaf, 5, 11, flipped, tree.root);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::kBadSignature);
  CHECK(refused.error().message.find("leads to the root hash") != std::string::npos);
  auto longer = tree.path;
  longer.push_back(tree.root);
  CHECK(verify_inclusion(leaf, 5, 11, longer, tree.root).error().message.find("more than the path") !=
        std::string::npos);
  auto shorter = tree.path;
  shorter.pop_back();
  CHECK(verify_inclusion(leaf, 5, 11, shorter, tree.root).error().message.find("fewer than the path") !=
        std::string::npos);
  CHECK(verify_inclusion(leaf, 11, 11, tree.path, tree.root).error().message.find("no such leaf") != std::string::npos);
  CHECK(verify_inclusion(leaf, -1, 11, tree.path, tree.root).error().message.find("no such leaf") != std::string::npos);
  auto short_hash = tree.path;
  short_hash[0].pop_back();
  CHECK(verify_inclusion(leaf, 5, 11, short_hash, tree.root).error().message.find("31 bytes") != std::string::npos);
}

}  // namespace
}  // namespace kernelhub::sigstore
