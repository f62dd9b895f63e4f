// The Hub's JSON answers that the client reads, parsed into checked values: the revision info, the
// refs, one page of a tree listing, an organization's overview. Whatever HF_ENDPOINT names is
// untrusted input here, so a wrong type, a missing field or an unsafe path is a kCorruptFile error
// (the caller adds which request it was), never an exception. fuzz/hub_answers_fuzzer.cpp drives
// these directly.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernelhub/base/result.hpp"
#include "kernelhub/client/internal/repo_tree.hpp"

namespace kernelhub::client {

// GET /api/<type>s/<id>/revision/<rev>: the commit, 40 lower-case hex.
Result<std::string> parse_revision_answer(std::string_view body);

struct BranchRef {
  std::string name;
  std::string commit;  // 40 lower-case hex, or empty when the answer had none
};

// GET /api/<type>s/<id>/refs: the branches (tags are not used).
Result<std::vector<BranchRef>> parse_refs_answer(std::string_view body);

// GET /api/<type>s/<id>/tree/<commit>?recursive=true: the files of one page (folders are skipped).
// Every path passes hub_names::validate_repo_path; ids are hex of the right length (an LFS
// entry's `lfs.oid` is its sha256; an invalid `xetHash` is dropped, as it is optional). A file
// whose path does not pass is an error, unless `unsafe` is given: then it goes there, and the
// page is read on (Note [Unsafe paths in a listing], repo_tree.hpp).
Result<std::vector<TreeEntry>> parse_tree_page(std::string_view body, std::vector<TreeEntry>* unsafe = nullptr);

// GET /api/organizations/<org>/overview: `trustedKernelPublisher` (false when absent).
Result<bool> parse_overview_answer(std::string_view body);

}  // namespace kernelhub::client
