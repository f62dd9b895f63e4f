// Merkle inclusion proofs of a transparency log (RFC 6962 section 2.1; the verification algorithm
// of RFC 9162 section 2.1.3.2): that a leaf is the `index`th of a tree of `tree_size` leaves whose
// root hash is known.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"

namespace kernelhub::sigstore {

// SHA-256(0x00 || leaf): the hash of a log entry (its canonicalized body) as a leaf of the tree.
std::string merkle_leaf_hash(std::string_view leaf);

// Whether `proof` (the audit path, lowest level first) leads from `leaf_hash` at `index` to
// `root_hash` in a tree of `tree_size` leaves. Errors: kBadSignature saying what did not fit (an
// index outside the tree, a proof of the wrong length or with a hash not 32 bytes, another root).
Status verify_inclusion(std::string_view leaf_hash, std::int64_t index, std::int64_t tree_size,
                        const std::vector<std::string>& proof, std::string_view root_hash);

}  // namespace kernelhub::sigstore
