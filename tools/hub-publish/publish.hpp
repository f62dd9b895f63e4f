// publish(): puts checked build variants on a Hub branch in ONE commit.
//
// Order, so that a reader never sees half a publish and a cut run can simply be repeated:
//   1. hash every local file; read the branch head and its files (the plan's parent commit);
//   2. leave out files the branch already has byte for byte; delete files of a published variant
//      that the new build no longer has (its signature beside it too, when it is not signed
//      again); nothing left → no commit (idempotent);
//   3. preupload classifies the rest; LFS content goes through the batch API, which skips what
//      the server already stores (a re-run after a cut sends only what is missing);
//   4. the branch is created (from main) only now, then one commit names the planned parent, so
//      a branch that moved in between is refused, never overwritten;
//   5. the card (README.md) goes to main in its own commit, when it differs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "build_dir_check.hpp"
#include "kernelhub/base/result.hpp"
#include "kernelhub/client/internal/upload.hpp"
#include "kernelhub/client/progress.hpp"

namespace kernelhub::publish {

struct PublishRequest {
  client::RepoId repo;
  RepoType type = RepoType::kKernel;
  std::string branch;  // v<N> or --branch
  bool is_private = false;
  bool create = false;                        // create the repo when missing
  bool dry_run = false;                       // plan only: no request at all
  std::vector<VariantDir> variants;           // checked (build_dir_check.hpp)
  std::optional<std::filesystem::path> card;  // README.md for main
};

struct PlannedFile {
  std::string path;  // in the repo
  std::uint64_t size = 0;
  std::string action;  // "add", "update", "unchanged", "delete"
};

struct PublishReport {
  std::string branch;
  std::string commit;  // the branch head afterwards (unchanged when nothing was committed)
  std::string commit_url;
  std::string url;         // the repo's web URL at the branch
  bool committed = false;  // a new commit was made on the branch
  bool branch_created = false;
  std::string card_commit;  // the commit on main carrying the card, when one was made
  std::vector<PlannedFile> files;
  client::LfsUploadStats lfs;
  std::uint64_t bytes_total = 0;
};

Result<PublishReport> publish(const PublishRequest& request, const client::HubUploader& hub,
                              client::ProgressReporter& progress);

}  // namespace kernelhub::publish
