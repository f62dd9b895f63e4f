#include "kernelhub/client/progress.hpp"

#include <unistd.h>

#include "kernelhub/base/internal/printable.hpp"

namespace kernelhub::client {

ProgressReporter::ProgressReporter(bool enabled, std::FILE* out, bool quiet)
    : enabled_(enabled), out_(out), quiet_(quiet) {}

ProgressReporter::ProgressReporter(ProgressSink* sink)
    : enabled_(sink != nullptr), out_(nullptr), quiet_(sink == nullptr), sink_(sink) {}

ProgressReporter ProgressReporter::for_terminal(bool quiet) {
  return ProgressReporter(!quiet && ::isatty(STDERR_FILENO) == 1, stderr, quiet);
}

void ProgressReporter::start(const std::string& label, std::uint64_t total_bytes, int files) {
  label_ = sink_ != nullptr ? label : printable(label, Lines::kEscaped);  // a repo's and a variant's name
  total_ = total_bytes;
  files_ = files;
  done_ = 0;
  files_done_ = 0;
  started_ = std::chrono::steady_clock::now();
  if (sink_ != nullptr) return sink_->start(label_, total_, files_);
  draw(true);
}

void ProgressReporter::add(std::uint64_t bytes) {
  done_ += bytes;
  if (sink_ != nullptr) return sink_->add(bytes);
  draw(false);
}

void ProgressReporter::file_done() {
  ++files_done_;
  if (sink_ != nullptr) return sink_->file_done();
  draw(false);
}

void ProgressReporter::retry(const std::string& message) {
  if (sink_ != nullptr) return sink_->retry(message);
  if (quiet_ || out_ == nullptr) return;
  // On its own line, above the progress line, which is drawn again below it.
  std::fprintf(out_, "%s%s: %s\n", drawn_ ? "\r\033[K" : "", label_.c_str(), printable(message).c_str());
  std::fflush(out_);
  if (drawn_) draw(true);
}

std::string ProgressReporter::format_bytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "kB", "MB", "GB", "TB"};
  int unit = 0;
  while (bytes >= 1000 && unit < 4) {
    bytes /= 1000;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, kUnits[unit]);
  return text;
}

void ProgressReporter::draw(bool force) {
  if (!enabled_ || sink_ != nullptr) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  const double seconds = std::chrono::duration<double>(now - started_).count();
  const double rate = seconds > 0 ? static_cast<double>(done_) / seconds : 0;
  std::string eta = "--";
  if (rate > 0 && total_ >= done_) {
    const long left = static_cast<long>(static_cast<double>(total_ - done_) / rate + 0.5);
    eta = left >= 60 ? std::to_string(left / 60) + "m" + std::to_string(left % 60) + "s" : std::to_string(left) + "s";
  }
  std::fprintf(out_, "\r\033[K%s  %s / %s  %s/s  ETA %s  [%d/%d files]", label_.c_str(),
               format_bytes(static_cast<double>(done_)).c_str(), format_bytes(static_cast<double>(total_)).c_str(),
               format_bytes(rate).c_str(), eta.c_str(), files_done_, files_);
  std::fflush(out_);
  drawn_ = true;
}

void ProgressReporter::finish() {
  if (sink_ != nullptr) return sink_->finish();
  if (!enabled_ || !drawn_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace kernelhub::client
