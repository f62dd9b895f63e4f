#include "kernelhub/sigstore/internal/inclusion_proof.hpp"

#include "kernelhub/base/internal/hex.hpp"
#include "kernelhub/sigstore/internal/verification_key.hpp"

namespace kernelhub::sigstore {

namespace {

constexpr std::size_t kHashSize = 32;

std::string node_hash(std::string_view left, std::string_view right) {
  std::string data;
  data.reserve(1 + left.size() + right.size());
  data.push_back('\x01');
  data.append(left);
  data.append(right);
  return digest(HashAlgorithm::kSha256, data);
}

Error refuse(std::string what) {
  return Error{ErrorCode::kBadSignature, "the inclusion proof " + std::move(what)};
}

}  // namespace

std::string merkle_leaf_hash(std::string_view leaf) {
  std::string data;
  data.reserve(1 + leaf.size());
  data.push_back('\x00');
  data.append(leaf);
  return digest(HashAlgorithm::kSha256, data);
}

Status verify_inclusion(std::string_view leaf_hash, std::int64_t index, std::int64_t tree_size,
                        const std::vector<std::string>& proof, std::string_view root_hash) {
  if (tree_size < 1 || index < 0 || index >= tree_size) {
    return unexpected(refuse("is for leaf " + std::to_string(index) + " of a tree of " + std::to_string(tree_size) +
                             " leaves, which has no such leaf"));
  }
  if (root_hash.size() != kHashSize) {
    return unexpected(refuse("has a root hash of " + std::to_string(root_hash.size()) + " bytes, not 32"));
  }
  auto node = static_cast<std::uint64_t>(index);
  auto last = static_cast<std::uint64_t>(tree_size - 1);
  std::string hash(leaf_hash);
  for (std::size_t i = 0; i < proof.size(); ++i) {
    const std::string& sibling = proof[i];
    if (sibling.size() != kHashSize) {
      return unexpected(refuse("has a hash of " + std::to_string(sibling.size()) + " bytes (number " +
                               std::to_string(i) + "), not 32"));
    }
    if (last == 0) {
      return unexpected(refuse("has " + std::to_string(proof.size()) + " hashes, more than the path from leaf " +
                               std::to_string(index) + " of " + std::to_string(tree_size) + " to the root"));
    }
    if ((node & 1) != 0 || node == last) {
      hash = node_hash(sibling, hash);
      while ((node & 1) == 0 && node != 0) {
        node >>= 1;
        last >>= 1;
      }
    } else {
      hash = node_hash(hash, sibling);
    }
    node >>= 1;
    last >>= 1;
  }
  if (last != 0) {
    return unexpected(refuse("has " + std::to_string(proof.size()) + " hashes, fewer than the path from leaf " +
                             std::to_string(index) + " of " + std::to_string(tree_size) + " to the root"));
  }
  if (hash != root_hash) {
    return unexpected(
        refuse("leads to the root hash " + to_hex(hash) + ", not the one it states, " + to_hex(root_hash)));
  }
  return {};
}

}  // namespace kernelhub::sigstore
