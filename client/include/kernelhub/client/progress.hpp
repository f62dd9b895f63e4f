// ProgressReporter: one line on a terminal with bytes done / total, rate and ETA over all files
// of a download, redrawn at most 10 times a second; silent when disabled (not a TTY, --quiet).
// Or, given a ProgressSink, each event handed to it instead (the Python package's progress bars).
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
// (every chunk: a sink that draws throttles itself), then finish.
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  virtual void start(const std::string& label, std::uint64_t total_bytes, int files) = 0;
  virtual void add(std::uint64_t bytes) = 0;
  virtual void finish() = 0;
};

class ProgressReporter {
 public:
  // A reporter that draws on `out` when `enabled`.
  ProgressReporter(bool enabled, std::FILE* out = stderr);
  // A reporter that hands every event to `sink` (not owned; must outlive the reporter).
  explicit ProgressReporter(ProgressSink* sink);
  // Enabled when stderr is a terminal and not `quiet`.
  static ProgressReporter for_terminal(bool quiet);

  void start(std::string label, std::uint64_t total_bytes, int files);
  void add(std::uint64_t bytes);
  void file_done();
  // Clears the line (the final summary is the caller's business).
  void finish();
  bool enabled() const { return enabled_; }

  // "12.3 MB", "1.2 GB": decimal units, as huggingface_hub's tqdm bars show.
  static std::string format_bytes(double bytes);

 private:
  void draw(bool force);

  bool enabled_;
  std::FILE* out_;
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
