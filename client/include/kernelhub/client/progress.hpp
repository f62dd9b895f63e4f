// ProgressReporter: one line on a terminal with bytes done / total, rate and ETA over all files
// of a download, redrawn at most 10 times a second; silent when disabled (not a TTY, --quiet).
// A retry is said on a line of its own, also where no line is drawn (not a TTY), unless quiet.
// Or, given a ProgressSink, each event handed to it instead (the Python package's progress bars).
// A ProgressReporter is a ProgressSink itself, so a caller that wants the terminal line hands one
// to an API that takes a sink (GetKernelOptions::progress, FetchContext::progress).
//
// Thread safety: add() and finish() are called from the download loop's thread only, or under
// the lock that parallel downloads share (blob_download.cpp); so are the sink's methods.
// Touches only the stream it is given (stderr by default).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace kernelhub::client {

// Where a download's progress goes when it is not drawn here: start, then bytes as they arrive
// (every chunk: a sink that draws throttles itself), each file done, each retry, then finish.
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  virtual void start(const std::string& label, std::uint64_t total_bytes, int files) = 0;
  virtual void add(std::uint64_t bytes) = 0;
  virtual void finish() = 0;
  virtual void file_done() {}
  // A transfer failed and will be tried again: `message` says which file, why, when, and how many
  // retries are left ("retrying `build/x/a.so` in 2 s (retry 2 of 5): ...").
  virtual void retry(const std::string& message) { (void)message; }
};

class ProgressReporter final : public ProgressSink {
 public:
  // A reporter that draws on `out` when `enabled`, and says retries there unless `quiet`.
  ProgressReporter(bool enabled, std::FILE* out = stderr, bool quiet = false);
  // A reporter that hands every event to `sink` (not owned; must outlive the reporter).
  explicit ProgressReporter(ProgressSink* sink);
  // Draws when stderr is a terminal and not `quiet`; says retries on stderr unless `quiet`.
  static ProgressReporter for_terminal(bool quiet);

  void start(const std::string& label, std::uint64_t total_bytes, int files) override;
  void add(std::uint64_t bytes) override;
  void file_done() override;
  void retry(const std::string& message) override;
  // Clears the line (the final summary is the caller's business).
  void finish() override;
  bool enabled() const { return enabled_; }

  // "12.3 MB", "1.2 GB": decimal units, as huggingface_hub's tqdm bars show.
  static std::string format_bytes(double bytes);

 private:
  void draw(bool force);

  bool enabled_;
  std::FILE* out_;
  bool quiet_ = false;
  ProgressSink* sink_ = nullptr;
  std::string label_;
  std::uint64_t total_ = 0;
  std::uint64_t done_ = 0;
  int files_ = 0;
  int files_done_ = 0;
  std::chrono::steady_clock::time_point started_{};
  std::chrono::steady_clock::time_point last_draw_{};
  bool drawn_ = false;
};

}  // namespace kernelhub::client
