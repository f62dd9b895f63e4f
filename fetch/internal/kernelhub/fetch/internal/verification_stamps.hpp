// VerificationStamps: what earlier verifications of a variant directory proved about its files,
// so that a load of unchanged files does not hash them again.
//
// After a fetch verified a variant (signature, lock hash, metadata.json digest), the hashes it
// used are kept with each file's stamp (file_stamp.hpp): in memory (the VerifiedDirs of the
// fetch's Session, session.hpp), and in a stamp file in kernelhub's state directory for later
// processes. The next fetch of that directory seeds its
// FileDigests with them; every check still runs, over remembered hashes instead of re-read bytes,
// and only for files whose stamp is exactly the recorded one. A file changed on disk (content,
// size, inode, or anything that moves its change time) is hashed again before it is trusted.
// As in git, a file changed less than 2 s before its verification was recorded is "racily clean"
// (it could change again without moving its times): it goes to no stamp file, so a later process
// hashes it once more. (In memory, a library already loaded cannot be loaded again.)
//
// Stamp files live in `$KERNELHUB_STATE_DIR`, else `$XDG_STATE_HOME/kernelhub`, else
// `~/.local/state/kernelhub` (`verified/<FNV-1a of the directory's path>.json`, mode 0600, written
// atomically): never in the Hugging Face cache, which other users and tools may write. A stamp
// file that is missing, unreadable or malformed is ignored (the files are hashed).
//
// Thread safety: every method may be called from several threads.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/base/internal/clock.hpp"
#include "kernelhub/base/internal/file_digests.hpp"

namespace kernelhub {

// The verifications remembered in memory, by canonical variant directory: what VerificationStamps
// records into and seeds from before it reads a stamp file, and which stamp file already holds
// all of a record (a repeated load of unchanged files then writes none).
class VerifiedDirs {
 public:
  using Files = std::map<std::filesystem::path, FileDigests::Entry>;

  // What was recorded for `dir`, if anything.
  std::optional<Files> find(const std::filesystem::path& dir) const;
  // Whether `files` is what was recorded for `dir`, and written, every entry, to `stamp_file`.
  bool written(const std::filesystem::path& dir, const Files& files, const std::filesystem::path& stamp_file) const;
  // `written_to`: the stamp file that holds every entry of `files`, if one does.
  void keep(const std::filesystem::path& dir, Files files, std::optional<std::filesystem::path> written_to);

 private:
  struct Record {
    Files files;
    std::optional<std::filesystem::path> written_to;
  };
  mutable std::mutex mutex_;
  std::map<std::filesystem::path, Record> dirs_;
};

class VerificationStamps {
 public:
  // How recent a file's times may be for it to be racily clean (see above).
  static constexpr std::chrono::seconds kRacyWindow{2};

  // `state_dir`: where stamp files are kept; none keeps them in `in_memory` only.
  // `in_memory`: also remember verifications there (not owned; none: stamp files only, as tests
  // that read files want). `racy_window`: how recent a file's times may be for it to go to a
  // stamp file. `clock`: whose wall time "now" is when a record is judged against the window.
  explicit VerificationStamps(std::optional<std::filesystem::path> state_dir, VerifiedDirs* in_memory,
                              std::chrono::nanoseconds racy_window = kRacyWindow,
                              std::shared_ptr<const Clock> clock = real_clock());

  // Seeds `digests` with what is known of the files under `variant_dir`.
  void seed(const std::filesystem::path& variant_dir, FileDigests& digests) const;

  // Records that `digests`'s hashes verified `variant_dir`: in memory and, best effort, in its
  // stamp file (not written again while it holds exactly this record).
  void record(const std::filesystem::path& variant_dir, const FileDigests& digests) const;

  // The stamp file of `variant_dir`, when there is a state directory.
  std::optional<std::filesystem::path> stamp_file(const std::filesystem::path& variant_dir) const;

 private:
  std::optional<std::filesystem::path> state_dir_;
  VerifiedDirs* in_memory_;
  std::chrono::nanoseconds racy_window_;
  std::shared_ptr<const Clock> clock_;
};

// Seeds `digests` with the hashes a download computed while the files streamed in (by path,
// client::Snapshot::downloaded_sha256): each holds while its file keeps the stamp it has now.
void remember_downloaded(const std::map<std::filesystem::path, FileHash>& hashes, FileDigests& digests);

}  // namespace kernelhub
