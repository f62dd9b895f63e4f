// GpuMemo: the GPUs a CUDA probe listed, kept for the rest of this boot in kernelhub's state
// directory (base/internal/state_dir.hpp), so that a later process need not start NVML or a child
// again: on an H100 that is 17-21 ms of a 30 ms torch-free get (bench/client/TORCH_FREE_GET.md).
//
// Kept under a key of everything that changes the answer without a reboot being needed to notice:
// the boot (/proc/sys/kernel/random/boot_id), the driver's version, the NVIDIA device nodes this
// process sees (names, device numbers, inodes, change times: a driver reload makes them again, a
// container given other GPUs has others) and CUDA_VISIBLE_DEVICES. The file is named by the key
// (`gpus/<name_hash of the key>`, so the ranks of a job with different CUDA_VISIBLE_DEVICES do not
// overwrite each other) and holds it whole: a file whose key is not exactly this process's is a
// miss, as is one that is missing, unreadable or malformed; then the probe runs and keeps its
// answer anew. Files untouched for 30 days are removed when one is written. KERNELHUB_GPUS (with
// KERNELHUB_CUDA_DRIVER) describes the machine without probe or memo.
//
// What it cannot see: a GPU lost mid-boot (fallen off the bus) keeps its line until the next boot
// or driver reload; the load then fails in CUDA, as it would have after a probe a moment earlier.
//
// Thread safety: const methods, safe from any thread; files written atomically, so concurrent
// processes read a whole file or none.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kernelhub/resolver/environment.hpp"

namespace kernelhub::resolver {

// Where the key's facts are read; tests point them at folders of their own.
struct GpuMemoSources {
  std::filesystem::path boot_id_file = "/proc/sys/kernel/random/boot_id";
  std::filesystem::path device_dir = "/dev";  // its nvidia* entries
  std::optional<std::string> cuda_visible_devices;
};

class GpuMemo {
 public:
  // Keeps nothing: no key, every recall a miss.
  GpuMemo() = default;
  // Files under `dir` (a folder in the state directory, created when first written).
  GpuMemo(std::filesystem::path state_dir, GpuMemoSources sources);
  // This process's: the state directory and CUDA_VISIBLE_DEVICES from `env`.
  static GpuMemo for_process(const EnvironmentSource& env);

  // The key for `driver` on this machine now; none when there is nowhere to keep it, the boot
  // cannot be told, or a fact cannot be written on one line.
  std::optional<std::string> key_for(const Version& driver) const;
  // The GPUs kept under exactly `key`; none on any miss.
  std::optional<std::vector<ComputeCapability>> recall(const std::string& key) const;
  // Keeps `gpus` under `key` (best effort: a failure costs the next process a probe).
  void keep(const std::string& key, const std::vector<ComputeCapability>& gpus) const;

 private:
  std::optional<std::filesystem::path> file_for(const std::string& key) const;

  std::optional<std::filesystem::path> state_dir_;
  GpuMemoSources sources_;
};

}  // namespace kernelhub::resolver
