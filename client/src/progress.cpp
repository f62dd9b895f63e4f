#include "kernelhub/client/progress.hpp"

#include <unistd.h>

namespace kernelhub::client {

ProgressReporter::ProgressReporter(bool enabled, std::FILE* out) : enabled_(enabled), out_(out) {}

ProgressReporter::ProgressReporter(ProgressSink* sink) : enabled_(sink != nullptr), out_(nullptr), sink_(sink) {}

ProgressReporter ProgressReporter::for_terminal(bool quiet) {
  return ProgressReporter(!quiet && ::isatty(STDERR_FILENO) == 1, stderr);
}

void ProgressReporter::start(std::string label, std::uint64_t total_bytes, int files) {
  label_ = std::move(label);
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
  draw(false);
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
