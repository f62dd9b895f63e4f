#include "blob_download.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <mutex>
#include <optional>
#include <thread>

#include "file_lock.hpp"
#include "hash_pipeline.hpp"
#include "hub_call.hpp"
#include "kernelhub/base/internal/atomic_file.hpp"
#include "kernelhub/base/internal/git_blob_sha1.hpp"
#include "kernelhub/base/internal/sha256.hpp"
#include "url.hpp"

namespace kernelhub::client {

namespace {

using TimePoint = std::chrono::steady_clock::time_point;
constexpr int kMaxIntegrityAttempts = 3;
constexpr std::uint64_t kWritebackChunk = 8u << 20;

// Checks what streams in against its etag (sha256 for 64-hex etags, LFS; git blob sha1 for 40-hex
// ones) and computes its SHA-256 in the same pass, which the load's checks then use instead of
// reading the file again.
class ContentHasher {
 public:
  ContentHasher(std::string_view etag, std::uint64_t size) : size_(size), lfs_(etag.size() == 64) { reset(); }
  void reset() {
    sha256_.emplace();
    if (!lfs_) sha1_.emplace(size_);
  }
  void update(const char* data, std::size_t n) {
    sha256_->update(data, n);
    if (sha1_) sha1_->update(data, n);
  }
  // The digest to compare with the etag, and the content's SHA-256.
  std::pair<std::string, Sha256Digest> finish() {
    const Sha256Digest sha256 = sha256_->finish();
    return {lfs_ ? to_hex(sha256) : sha1_->finish_hex(), sha256};
  }

 private:
  std::uint64_t size_;
  bool lfs_;
  std::optional<Sha256> sha256_;
  std::optional<GitBlobSha1> sha1_;
};

// Hash on worker threads only where cores are to spare (measured: on 2 busy cores the copy
// into the queue costs more than the overlap gains).
int hash_workers(const Settings& settings) {
  if (settings.hash_threads >= 0) return settings.hash_threads;
  const unsigned cores = std::thread::hardware_concurrency();
  return cores >= 4 ? static_cast<int>(std::min(cores / 2, 4u)) : 0;
}

// Threads that each run their share of the files, hashing inline: one below 8 cores (where the
// server or the rest of the machine needs the others), else a quarter of the cores, at most 4.
int transfer_threads(const Settings& settings, std::size_t files) {
  const unsigned cores = std::thread::hardware_concurrency();
  const int wanted = settings.transfer_threads >= 1 ? settings.transfer_threads
                     : cores >= 8                   ? static_cast<int>(std::min(cores / 4, 4u))
                                                    : 1;
  return std::max(1, std::min(wanted, static_cast<int>(files)));
}

// `jobs` dealt to `groups` shares of about equal bytes, largest first.
std::vector<std::vector<BlobJob>> balanced_shares(std::vector<BlobJob> jobs, int groups) {
  std::sort(jobs.begin(), jobs.end(), [](const BlobJob& a, const BlobJob& b) { return a.size > b.size; });
  std::vector<std::vector<BlobJob>> out(static_cast<std::size_t>(groups));
  std::vector<std::uint64_t> bytes(out.size(), 0);
  for (BlobJob& job : jobs) {
    const auto lightest = static_cast<std::size_t>(std::min_element(bytes.begin(), bytes.end()) - bytes.begin());
    bytes[lightest] += job.size;
    out[lightest].push_back(std::move(job));
  }
  return out;
}

std::string plural(int n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

class BlobDownload;

struct Job final : BodySink {
  enum class State { kWaiting, kInFlight, kDone, kFailed };

  BlobDownload* owner = nullptr;
  HashPipeline* pipeline = nullptr;
  std::size_t stream = 0;  // this job's stream in `pipeline`
  bool sync_enabled = false;
  BlobJob spec;
  std::string url;
  State state = State::kWaiting;
  TimePoint ready_at{};
  int failures = 0;     // consecutive attempts that ended without progress (the backoff)
  int retries = 0;      // every retry after a transient failure (Note [Retry policy])
  int attempts = 0;     // every GET
  TimePoint started{};  // of the first GET
  int integrity_failures = 0;
  int redirects = 0;
  std::optional<FileLock> lock;
  int fd = -1;
  std::filesystem::path temp;
  std::uint64_t written = 0;
  std::optional<ContentHasher> hasher;
  // Per attempt:
  int status = 0;
  bool to_file = false;
  bool range_mismatch = false;
  bool overflow = false;
  bool write_failed = false;
  int write_errno = 0;
  std::uint64_t attempt_bytes = 0;
  std::string error_body;
  std::optional<Error> error;

  bool begin(int code, const std::vector<Header>& headers) override;
  bool write(const char* data, std::size_t size) override;

  // Per-attempt state starts clean even when no body byte (and so no begin()) ever comes.
  void start_attempt() {
    status = 0;
    to_file = false;
    attempt_bytes = 0;
    error_body.clear();
    range_mismatch = overflow = write_failed = false;
  }

  void restart_file() {
    if (fd >= 0) {
      if (::ftruncate(fd, 0) != 0) { /* the next write reports it */
      }
      ::lseek(fd, 0, SEEK_SET);
    }
    written = 0;
    drain();
    hasher->reset();
  }
  void drain() {
    if (pipeline) pipeline->drain(stream);
  }
  void discard_temp() {
    if (fd >= 0) ::close(fd);
    fd = -1;
    if (!temp.empty()) ::unlink(temp.c_str());
    temp.clear();
  }
};

class BlobDownload final : public Workload {
 public:
  BlobDownload(const CacheLayout& layout, const std::string& commit, std::vector<BlobJob> specs,
               const Settings& settings, ClientState& state, ProgressReporter& progress, const What& what)
      : layout_(layout),
        commit_(commit),
        settings_(settings),
        state_(state),
        progress_(progress),
        what_(what),
        hub_origin_(url::origin(settings.endpoint)),
        pipeline_(hash_workers(settings) > 0 ? std::make_unique<HashPipeline>(hash_workers(settings)) : nullptr) {
    jobs_.resize(specs.size());
    for (std::size_t i = 0; i < specs.size(); ++i) {
      jobs_[i].owner = this;
      jobs_[i].sync_enabled = settings.fsync;
      if (pipeline_) {
        jobs_[i].pipeline = pipeline_.get();
        Job* job = &jobs_[i];
        jobs_[i].stream =
            pipeline_->add_stream([job](const char* data, std::size_t n) { job->hasher->update(data, n); });
      }
      jobs_[i].url = specs[i].url;
      jobs_[i].hasher.emplace(specs[i].etag, specs[i].size);
      jobs_[i].spec = std::move(specs[i]);
    }
    mode_ = 0666;
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode_ &= ~mask;
  }
  ~BlobDownload() override {
    for (Job& j : jobs_) j.discard_temp();
  }

  std::optional<Item> next() override {
    const auto now = settings_.clock->now();
    for (std::size_t i = 0; i < jobs_.size(); ++i) {
      Job& j = jobs_[i];
      if (j.state != Job::State::kWaiting || j.ready_at > now) continue;
      if (!j.lock) {
        j.lock = FileLock::try_lock(layout_.lock_path(j.spec.etag));
        if (!j.lock) {  // another process is fetching this blob: look again soon
          j.ready_at = now + std::chrono::milliseconds(20);
          continue;
        }
        if (!j.spec.replace && blob_present(j)) {
          publish_link(j);
          continue;
        }
        take_partial(j);
        if (j.fd >= 0 && j.written == j.spec.size) {  // a partial download that is whole: check it
          complete(j);
          continue;
        }
      }
      if (auto down = state_.given_up(url::origin(j.url))) {
        fail(j, not_asked_again(*down, what_for(j).describe()));
        continue;
      }
      if (j.fd < 0) {
        std::error_code ec;
        std::filesystem::create_directories(layout_.blobs_dir(), ec);
        j.temp = layout_.incomplete_path(j.spec.etag);
        j.fd = ::open(j.temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (j.fd < 0) {
          fail(j, os_error("cannot create `" + j.temp.string() + "`", errno));
          j.temp.clear();
          continue;
        }
        j.written = 0;
        j.drain();
        j.hasher->reset();
      }
      Request request;
      request.url = j.url;
      request.connect_timeout = settings_.connect_timeout;
      request.read_timeout = settings_.read_timeout;
      request.headers.push_back({"User-Agent", settings_.user_agent()});
      request.headers.push_back({"Accept-Encoding", "identity"});
      if (settings_.token && url::origin(j.url) == hub_origin_) {
        request.headers.push_back({"Authorization", "Bearer " + settings_.token->value()});
      }
      if (j.written > 0) request.headers.push_back({"Range", "bytes=" + std::to_string(j.written) + "-"});
      // A body that failed its hash may sit in a cache between us and the Hub (a site cache):
      // the retry asks every cache on the way to fetch it again, and so replaces the bad copy.
      if (j.integrity_failures > 0) request.headers.push_back({"Cache-Control", "no-cache"});
      j.state = Job::State::kInFlight;
      j.start_attempt();
      if (j.attempts++ == 0) j.started = now;
      ++report_.requests;
      state_.count_request();
      return Item{i, std::move(request), &j};
    }
    return std::nullopt;
  }

  void finished(std::uint64_t id, Result<Response> result) override {
    Job& j = jobs_[id];
    j.state = Job::State::kWaiting;
    if (j.write_failed) {
      fail(j, os_error("cannot write `" + j.temp.string() + "`", j.write_errno));
      return;
    }
    if (j.overflow) {
      integrity_retry(j, "the server sent more than the expected " + std::to_string(j.spec.size) + " bytes");
      return;
    }
    if (j.range_mismatch) {
      j.restart_file();
      transient(j, "the server answered the range request with another range");
      return;
    }
    if (!result) {
      if (gives_up(result.error()) && j.attempt_bytes == 0) {
        // Not there, or silent: no retry, and no other request of this client goes there.
        Error error = unreachable(settings_, j.url, what_for(j).describe(), result.error(), j.attempts, j.started);
        state_.give_up(url::origin(j.url), error);
        fail(j, std::move(error));
        return;
      }
      transient(j, result.error().message);
      return;
    }
    const Response& response = *result;
    const int status = response.status;
    if (status >= 300 && status < 400) {
      const std::string* location = response.header("location");
      if (location == nullptr || location->empty()) {
        fail(j, Error{ErrorCode::kNetwork,
                      "HTTP " + std::to_string(status) + " without a Location for " + what_for(j).describe()});
        return;
      }
      if (++j.redirects > kMaxRedirects) {
        fail(j, Error{ErrorCode::kNetwork, "too many redirects (" + std::to_string(kMaxRedirects) + ", a loop?) for " +
                                               what_for(j).describe() + ", last at `" + url::redact(j.url) + "`"});
        return;
      }
      auto next = url::resolve(j.url, *location);
      if (!next) {
        fail(j, next.error().with_context(what_for(j).describe()));
        return;
      }
      j.url = std::move(*next);
      return;  // ready now; the token goes along only if it points at the Hub's origin
    }
    if (status == 200 || status == 206) {
      if (j.written < j.spec.size) {
        transient(j, "the connection closed after " + std::to_string(j.written) + " of " + std::to_string(j.spec.size) +
                         " bytes");
        return;
      }
      complete(j);
      return;
    }
    if (status == 416 && j.written > 0) {
      j.restart_file();
      transient(j, "HTTP 416 for a resumed range");
      return;
    }
    if (is_retriable_status(status)) {
      const auto wait = retry_after(response);
      transient(j, "HTTP " + std::to_string(status) + " from `" + url::redact(j.url) + "`",
                wait ? std::optional(std::min(*wait, settings_.retry_after_max)) : std::nullopt);
      return;
    }
    fail(j, error_from_response(response, j.error_body, what_for(j), j.url));
  }

  bool done() const override {
    return std::all_of(jobs_.begin(), jobs_.end(),
                       [](const Job& j) { return j.state == Job::State::kDone || j.state == Job::State::kFailed; });
  }

  // Until the first waiting job is ready (a backoff), at most 50 ms: on the settings' clock.
  void wait_idle() override { settings_.clock->sleep_for(idle_wait()); }

  std::chrono::milliseconds idle_wait() const {
    auto wait = std::chrono::milliseconds(50);
    const auto now = settings_.clock->now();
    for (const Job& j : jobs_) {
      if (j.state != Job::State::kWaiting) continue;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(j.ready_at - now);
      wait = std::min(wait, std::max(left, std::chrono::milliseconds(1)));
    }
    return wait;
  }

  Result<BlobReport> result() const {
    for (const Job& j : jobs_) {
      if (j.state == Job::State::kFailed) return unexpected(*j.error);
    }
    return report_;
  }

  void on_bytes(std::uint64_t n) {
    report_.bytes += n;
    add_progress(n);
  }

  // Several downloads share one progress line when they run on threads of their own.
  void share_progress(std::mutex* lock) { progress_lock_ = lock; }

 private:
  What what_for(const Job& j) const {
    What w = what_;
    w.path = j.spec.path;
    return w;
  }

  bool blob_present(const Job& j) const {
    struct stat st {};
    return ::stat(layout_.blob_path(j.spec.etag).c_str(), &st) == 0 &&
           static_cast<std::uint64_t>(st.st_size) == j.spec.size;
  }

  // Note [Partial downloads] (blob_download.hpp): the longest partial file of this blob, left by a
  // writer that gave up or died (we hold the blob's lock, so none of them is writing), becomes
  // this job's temp file, its bytes hashed, and the download continues after them. The other
  // partial files go; a `fresh` job takes none.
  void take_partial(Job& j) {
    const std::string prefix = j.spec.etag + ".";
    std::filesystem::path longest;
    std::uint64_t longest_size = 0;
    std::vector<std::filesystem::path> others;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(layout_.blobs_dir(), ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (!name.starts_with(prefix) || !name.ends_with(".incomplete")) continue;
      struct stat st {};
      const bool usable = !j.spec.fresh && ::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
                          static_cast<std::uint64_t>(st.st_size) <= j.spec.size;
      if (usable && (longest.empty() || static_cast<std::uint64_t>(st.st_size) > longest_size)) {
        if (!longest.empty()) others.push_back(longest);
        longest = it->path();
        longest_size = static_cast<std::uint64_t>(st.st_size);
      } else {
        others.push_back(it->path());
      }
    }
    for (const auto& path : others) ::unlink(path.c_str());
    if (longest.empty()) return;
    if (longest_size == 0) {
      ::unlink(longest.c_str());
      return;
    }
    const std::filesystem::path temp = layout_.incomplete_path(j.spec.etag);
    if (::rename(longest.c_str(), temp.c_str()) != 0) return;
    const int fd = ::open(temp.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0 || !hash_prefix(j, fd, longest_size)) {
      if (fd >= 0) ::close(fd);
      ::unlink(temp.c_str());
      return;
    }
    j.fd = fd;
    j.temp = temp;
    j.written = longest_size;
    report_.resumed_bytes += longest_size;
    add_progress(longest_size);
  }

  // Hashes the first `size` bytes of `fd` into j's hasher (from scratch) and leaves the offset at
  // their end. False when they cannot be read.
  bool hash_prefix(Job& j, int fd, std::uint64_t size) {
    j.drain();
    j.hasher->reset();
    std::vector<char> buffer(std::min<std::uint64_t>(size, 1u << 20));
    std::uint64_t done = 0;
    while (done < size) {
      const ssize_t n =
          ::pread(fd, buffer.data(), std::min<std::uint64_t>(buffer.size(), size - done), static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      j.hasher->update(buffer.data(), static_cast<std::size_t>(n));
      done += static_cast<std::uint64_t>(n);
    }
    return ::lseek(fd, static_cast<off_t>(size), SEEK_SET) == static_cast<off_t>(size);
  }

  void add_progress(std::uint64_t n) {
    if (progress_lock_ == nullptr) return progress_.add(n);
    std::lock_guard lock(*progress_lock_);
    progress_.add(n);
  }

  void publish_link(Job& j) {
    j.discard_temp();
    auto linked = layout_.link_snapshot(commit_, j.spec.path, j.spec.etag);
    j.lock.reset();
    if (!linked) {
      fail(j, linked.error());
      return;
    }
    j.state = Job::State::kDone;
    if (progress_lock_ == nullptr) return progress_.file_done();
    std::lock_guard lock(*progress_lock_);
    progress_.file_done();
  }

  // A failure worth another attempt: resume (Range) from what is written, after a backoff.
  // Note [Retry policy]: a file is retried at most settings.max_retries times in all (5, what
  // docs/CLI.md promises and huggingface_hub's http_get does), whatever each attempt received:
  // a transfer cut every time ends after 6 attempts, bounded in time, instead of going on for as
  // long as each attempt brings a few bytes. The wait doubles from backoff_base to backoff_max
  // (1, 2, 4, 8, 8 s), from the base again after an attempt that received bytes (the link works,
  // it was cut). Each retry is said (ProgressSink::retry). What was received stays on disk, and the
  // next command continues it (Note [Partial downloads]); the error says so.
  void transient(Job& j, const std::string& why, std::optional<std::chrono::milliseconds> wait = std::nullopt) {
    if (j.attempt_bytes > 0) j.failures = 0;  // the link works: the backoff starts over
    ++j.failures;
    ++j.retries;
    if (j.retries > settings_.max_retries) {
      const std::string kept = j.written > 0
                                   ? "; the " + std::to_string(j.written) + " of " + std::to_string(j.spec.size) +
                                         " bytes received are kept, and running the command again continues from there"
                                   : "";
      // j.retries is now the transfers tried: the first and max_retries more (redirects not counted).
      fail(j, Error{ErrorCode::kNetwork,
                    "cannot download " + what_for(j).describe() + " after " + plural(j.retries, "attempt") + ": " +
                        why + " (the last of " + std::to_string(settings_.max_retries) + " retries, " +
                        seconds_text(settings_.clock->now() - j.started) + " after the first)" + kept});
      return;
    }
    const auto delay = wait ? *wait : backoff_delay(settings_, j.failures);
    j.ready_at = settings_.clock->now() + delay;
    say_retry("retrying `" + j.spec.path + "` in " + seconds_text(delay) + " (retry " + std::to_string(j.retries) +
              " of " + std::to_string(settings_.max_retries) + "): " + why);
  }

  void say_retry(const std::string& message) {
    if (progress_lock_ == nullptr) return progress_.retry(message);
    std::lock_guard lock(*progress_lock_);
    progress_.retry(message);
  }

  void integrity_retry(Job& j, const std::string& why) {
    j.restart_file();
    j.url = j.spec.url;
    j.redirects = 0;
    if (++j.integrity_failures >= kMaxIntegrityAttempts) {
      fail(j, Error{ErrorCode::kIntegrityMismatch, what_for(j).describe() + " failed verification " +
                                                       plural(j.integrity_failures, "time") + ": " + why +
                                                       "; nothing was stored. The server or a proxy is serving "
                                                       "corrupt data; try again later or another endpoint"});
      return;
    }
    j.ready_at = settings_.clock->now() + backoff_delay(settings_, j.integrity_failures);
  }

  void complete(Job& j) {
    j.drain();
    const auto [digest, sha256] = j.hasher->finish();
    if (digest != j.spec.etag) {
      integrity_retry(j, std::string(j.spec.etag.size() == 64 ? "sha256" : "git blob sha1") + " is " + digest +
                             ", expected " + j.spec.etag);
      return;
    }
    if (settings_.fsync) ::fdatasync(j.fd);
    ::fchmod(j.fd, mode_);
    ::close(j.fd);
    j.fd = -1;
    const std::filesystem::path blob = layout_.blob_path(j.spec.etag);
    const Status published = rename_into_place(j.temp, blob);  // removes the temp file on failure
    j.temp.clear();
    if (!published) {
      fail(j, published.error());
      return;
    }
    // A git blob's sha1 was its etag, checked above: the load's lock check reuses it.
    report_.sha256.insert_or_assign(blob, FileHash{sha256, j.spec.size, j.spec.etag.size() == 40 ? j.spec.etag : ""});
    publish_link(j);
  }

  void fail(Job& j, Error error) {
    if (error.code == ErrorCode::kNetwork && j.fd >= 0 && j.written > 0) {
      keep_partial(j);
    } else {
      j.discard_temp();
    }
    j.lock.reset();
    j.state = Job::State::kFailed;
    j.error = std::move(error);
  }

  // Note [Partial downloads]: what a job that gives up on the network has received stays, for the
  // next writer of the blob to continue (kept while we still hold its lock).
  void keep_partial(Job& j) {
    j.drain();
    ::close(j.fd);
    j.fd = -1;
    if (::rename(j.temp.c_str(), layout_.partial_path(j.spec.etag).c_str()) != 0) ::unlink(j.temp.c_str());
    j.temp.clear();
  }

  const CacheLayout& layout_;
  const std::string& commit_;
  const Settings& settings_;
  ClientState& state_;
  ProgressReporter& progress_;
  std::mutex* progress_lock_ = nullptr;
  const What& what_;
  std::string hub_origin_;
  std::vector<Job> jobs_;
  BlobReport report_;
  mode_t mode_;
  // After jobs_: its workers stop before the jobs they hash go away. None on a small machine,
  // where a hashing thread only competes with the transfer for the same cores.
  std::unique_ptr<HashPipeline> pipeline_;
};

bool Job::begin(int code, const std::vector<Header>& headers) {
  status = code;
  to_file = code == 200 || code == 206;
  if (code == 200 && written > 0) restart_file();  // the server ignored Range: start over
  if (code == 206) {
    // "bytes <start>-<end>/<total>": it must continue exactly where we stopped.
    std::uint64_t start = UINT64_MAX;
    for (const Header& h : headers) {
      if (h.name != "content-range") continue;
      const auto space = h.value.find(' ');
      if (space != std::string::npos) {
        std::from_chars(h.value.data() + space + 1, h.value.data() + h.value.size(), start);
      }
    }
    if (start != written) {
      range_mismatch = true;
      return false;
    }
  }
  return true;
}

bool Job::write(const char* data, std::size_t size) {
  if (!to_file) {
    if (error_body.size() < 65536) error_body.append(data, std::min<std::size_t>(size, 65536 - error_body.size()));
    return true;
  }
  if (written + size > spec.size) {
    overflow = true;
    return false;
  }
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      write_failed = true;
      write_errno = errno;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  if (pipeline) {
    pipeline->push(stream, data, size);
  } else {
    hasher->update(data, size);
  }
  if (sync_enabled && written / kWritebackChunk != (written + size) / kWritebackChunk) {
    // Start writeback of the finished chunk now, so the fdatasync before publishing finds
    // little left to flush (the disk works while the network does).
    const std::uint64_t chunk_end = (written + size) / kWritebackChunk * kWritebackChunk;
    ::sync_file_range(fd, static_cast<off_t>(chunk_end - kWritebackChunk), kWritebackChunk, SYNC_FILE_RANGE_WRITE);
  }
  written += size;
  attempt_bytes += size;
  owner->on_bytes(size);
  return true;
}

}  // namespace

Result<BlobReport> download_blobs(const CacheLayout& layout, const std::string& commit, std::vector<BlobJob> jobs,
                                  const Settings& settings, Transport& transport, ClientState& state,
                                  ProgressReporter& progress, const What& what) {
  for (const BlobJob& job : jobs) {
    if (!(is_lower_hex(job.etag, 64) || is_lower_hex(job.etag, 40))) {
      What w = what;
      w.path = job.path;
      return unexpected(ErrorCode::kCorruptFile, "the Hub reports `" + job.etag + "` as the id of " + w.describe() +
                                                     ", which is neither a sha256 nor a git sha1: cannot verify it");
    }
  }
  const int threads = transfer_threads(settings, jobs.size());
  if (threads == 1) {
    BlobDownload work(layout, commit, std::move(jobs), settings, state, progress, what);
    transport.run(work, std::max(1, settings.max_parallel));
    return work.result();
  }
  // One thread alone cannot receive, write and hash at the speed of loopback or a fast network:
  // each thread takes a share of the files and hashes what it receives itself (no copy to hash
  // workers). Built here, on this thread: the constructor reads the umask.
  Settings per_thread = settings;
  per_thread.hash_threads = 0;
  per_thread.max_parallel = std::max(1, settings.max_parallel / threads);
  std::mutex progress_lock;
  std::vector<std::unique_ptr<BlobDownload>> works;
  for (auto& share : balanced_shares(std::move(jobs), threads)) {
    works.push_back(
        std::make_unique<BlobDownload>(layout, commit, std::move(share), per_thread, state, progress, what));
    works.back()->share_progress(&progress_lock);
  }
  {
    std::vector<std::jthread> running;
    for (std::size_t i = 1; i < works.size(); ++i) {
      running.emplace_back([&, i] { transport.run(*works[i], per_thread.max_parallel); });
    }
    transport.run(*works.front(), per_thread.max_parallel);
  }  // joined
  BlobReport total;
  for (const auto& work : works) {
    KH_ASSIGN_OR_RETURN(BlobReport part, work->result());
    total.bytes += part.bytes;
    total.resumed_bytes += part.resumed_bytes;
    total.requests += part.requests;
    total.sha256.merge(part.sha256);
  }
  return total;
}

}  // namespace kernelhub::client
