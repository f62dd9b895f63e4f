#include "kernelhub/resolver/internal/gpu_memo.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <string_view>
#include <system_error>

#include "kernelhub/base/environment_variables.hpp"
#include "kernelhub/base/internal/atomic_file.hpp"
#include "kernelhub/base/internal/name_hash.hpp"
#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/base/internal/state_dir.hpp"

namespace kernelhub::resolver {

namespace {

constexpr std::string_view kHeader = "kernelhub gpus 1\n";
constexpr std::string_view kGpusField = "gpus=";
constexpr std::string_view kFolder = "gpus";
constexpr auto kUnusedFor = std::chrono::hours(24 * 30);

bool one_line(std::string_view text) {
  return text.find('\n') == std::string_view::npos && text.find('\r') == std::string_view::npos;
}

// "node=nvidia0 195:0 <inode> <change time, ns>" for each nvidia* entry of `dir`, sorted: what a
// driver reload (nodes made again) or a container given other GPUs changes.
std::optional<std::string> device_nodes(const std::filesystem::path& dir) {
  std::vector<std::string> lines;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with("nvidia") || !one_line(name)) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    const long long changed_ns = static_cast<long long>(st.st_ctim.tv_sec) * 1'000'000'000LL + st.st_ctim.tv_nsec;
    lines.push_back("node=" + name + " " + std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev)) +
                    " " + std::to_string(st.st_ino) + " " + std::to_string(changed_ns));
  }
  if (ec) return std::nullopt;
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out;
}

std::optional<ComputeCapability> parse_capability(std::string_view text) {
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  ComputeCapability c;
  const auto major_text = text.substr(0, dot), minor_text = text.substr(dot + 1);
  const auto a = std::from_chars(major_text.data(), major_text.data() + major_text.size(), c.major);
  const auto b = std::from_chars(minor_text.data(), minor_text.data() + minor_text.size(), c.minor);
  if (a.ec != std::errc() || a.ptr != major_text.data() + major_text.size() || b.ec != std::errc() ||
      b.ptr != minor_text.data() + minor_text.size() || major_text.empty() || minor_text.empty() || c.major < 0 ||
      c.minor < 0) {
    return std::nullopt;
  }
  return c;
}

// Removes the memo files of earlier boots that no process has written for kUnusedFor.
void remove_unused(const std::filesystem::path& dir) {
  std::error_code ec;
  const auto now = std::filesystem::file_time_type::clock::now();
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    if (!it->is_regular_file(entry_ec)) continue;
    const auto written = it->last_write_time(entry_ec);
    if (!entry_ec && now - written > kUnusedFor) std::filesystem::remove(it->path(), entry_ec);
  }
}

}  // namespace

GpuMemo::GpuMemo(std::filesystem::path state_dir, GpuMemoSources sources)
    : state_dir_(std::move(state_dir)), sources_(std::move(sources)) {}

GpuMemo GpuMemo::for_process(const EnvironmentSource& env) {
  auto dir = state_dir_from(env);
  if (!dir) return GpuMemo();
  GpuMemoSources sources;
  sources.cuda_visible_devices = env(env_vars::kCudaVisibleDevices);
  return GpuMemo(std::move(*dir), std::move(sources));
}

std::optional<std::string> GpuMemo::key_for(const Version& driver) const {
  if (!state_dir_) return std::nullopt;
  auto boot_id = read_file(sources_.boot_id_file);
  if (!boot_id) return std::nullopt;
  while (!boot_id->empty() && (boot_id->back() == '\n' || boot_id->back() == ' ')) boot_id->pop_back();
  if (boot_id->empty() || !one_line(*boot_id)) return std::nullopt;
  const auto& visible = sources_.cuda_visible_devices;
  if (visible && !one_line(*visible)) return std::nullopt;
  auto nodes = device_nodes(sources_.device_dir);
  if (!nodes) return std::nullopt;
  return "boot=" + *boot_id + "\ndriver=" + driver.to_string() + "\n" +
         (visible ? "cuda_visible_devices=" + *visible : std::string("cuda_visible_devices unset")) + "\n" + *nodes;
}

std::optional<std::filesystem::path> GpuMemo::file_for(const std::string& key) const {
  if (!state_dir_) return std::nullopt;
  return *state_dir_ / kFolder / name_hash(key);
}

std::optional<std::vector<ComputeCapability>> GpuMemo::recall(const std::string& key) const {
  const auto file = file_for(key);
  if (!file) return std::nullopt;
  const auto text = read_file(*file);
  if (!text) return std::nullopt;
  const std::string expected = std::string(kHeader) + key + std::string(kGpusField);
  if (!text->starts_with(expected) || !text->ends_with("\n")) return std::nullopt;
  std::string_view list(*text);
  list.remove_prefix(expected.size());
  list.remove_suffix(1);
  std::vector<ComputeCapability> gpus;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const auto gpu = parse_capability(list.substr(0, comma));
    if (!gpu) return std::nullopt;
    gpus.push_back(*gpu);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
    if (list.empty()) return std::nullopt;  // a trailing comma: not what keep writes
  }
  return gpus;
}

void GpuMemo::keep(const std::string& key, const std::vector<ComputeCapability>& gpus) const {
  const auto file = file_for(key);
  if (!file) return;
  const auto dir = state_subdir(*state_dir_, kFolder);
  if (!dir) return;
  remove_unused(*dir);
  std::string text = std::string(kHeader) + key + std::string(kGpusField);
  for (std::size_t i = 0; i < gpus.size(); ++i) text += (i ? "," : "") + gpus[i].to_string();
  text += "\n";
  (void)write_file_atomic(*file, text, {.mode = 0600});
}

}  // namespace kernelhub::resolver
