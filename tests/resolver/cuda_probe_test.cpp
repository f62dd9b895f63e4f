#include "kernelhub/resolver/internal/cuda_probe.hpp"

#include <catch2/catch.hpp>
#include <fstream>

#include "support/temp_dir.hpp"

namespace kernelhub::resolver {
namespace {

// A driver seam that counts what the probe asked.
struct FakeDriver {
  std::optional<Version> version = Version{13, 0};
  std::optional<std::vector<ComputeCapability>> initialised;  // none: CUDA not initialised here
  std::optional<std::vector<ComputeCapability>> nvml;         // none: no NVML, or it cannot tell
  std::vector<ComputeCapability> child_answer{{9, 0}};
  int version_calls = 0, in_process_calls = 0, nvml_calls = 0, child_calls = 0;

  CudaDriverAccess access() {
    return CudaDriverAccess{[this] {
                              ++version_calls;
                              return version;
                            },
                            [this] {
                              ++in_process_calls;
                              return initialised;
                            },
                            [this] {
                              ++nvml_calls;
                              return nvml;
                            },
                            [this] {
                              ++child_calls;
                              return child_answer;
                            }};
  }
};

TEST_CASE("where this process has initialised CUDA (torch), the GPUs are listed here, with no child") {
  FakeDriver driver;
  driver.initialised = std::vector<ComputeCapability>{{9, 0}, {8, 0}};
  const CudaProbe probe = probe_cuda(driver.access());
  CHECK(driver.child_calls == 0);
  CHECK_FALSE(probe.forked);
  REQUIRE(probe.gpus.size() == 2);
  CHECK(probe.gpus[1].to_string() == "8.0");
  CHECK(probe.driver->to_string() == "13.0");
}

TEST_CASE("where CUDA is not initialised here, one child lists the GPUs, once per process") {
  FakeDriver driver;
  CudaProbeOnce once(driver.access());
  const CudaProbe& first = once.get();
  const CudaProbe& again = once.get();
  CHECK(&first == &again);
  CHECK(driver.child_calls == 1);
  CHECK(driver.version_calls == 1);
  CHECK(first.forked);
  REQUIRE(first.gpus.size() == 1);
  CHECK(first.gpus[0].to_string() == "9.0");
}

TEST_CASE("where NVML can say which GPUs CUDA sees, no child is forked") {
  FakeDriver driver;
  driver.nvml = std::vector<ComputeCapability>{{9, 0}};
  const CudaProbe probe = probe_cuda(driver.access());
  CHECK(driver.child_calls == 0);
  CHECK(probe.from_nvml);
  CHECK_FALSE(probe.forked);
  REQUIRE(probe.gpus.size() == 1);
}

TEST_CASE("CUDA_VISIBLE_DEVICES mapped onto NVML's list as CUDA reads it") {
  const std::vector<NvmlGpu> same{{{9, 0}, "GPU-aaaa1111"}, {{9, 0}, "GPU-bbbb2222"}};
  const std::vector<NvmlGpu> mixed{{{9, 0}, "GPU-aaaa1111"}, {{8, 0}, "GPU-bbbb2222"}};
  CHECK(gpus_visible_to_cuda(same, nullptr)->size() == 2);
  CHECK(gpus_visible_to_cuda(same, "")->empty());
  CHECK(gpus_visible_to_cuda(same, "-1")->empty());
  CHECK(gpus_visible_to_cuda(same, "1")->size() == 1);
  CHECK(gpus_visible_to_cuda(same, "0,7,1")->size() == 1);  // CUDA stops at the first it cannot use
  CHECK(gpus_visible_to_cuda(mixed, "GPU-bbbb")->front().to_string() == "8.0");
  CHECK_FALSE(gpus_visible_to_cuda(mixed, "1").has_value());  // fastest-first order unknown here
  CHECK_FALSE(gpus_visible_to_cuda(same, "MIG-1234").has_value());
}

TEST_CASE("without a driver nothing else is asked") {
  FakeDriver driver;
  driver.version.reset();
  const CudaProbe probe = probe_cuda(driver.access());
  CHECK_FALSE(probe.driver.has_value());
  CHECK(probe.gpus.empty());
  CHECK(driver.in_process_calls == 0);
  CHECK(driver.nvml_calls == 0);
  CHECK(driver.child_calls == 0);
}

// A memo of its own (gpu_memo.hpp): a boot id, a /dev with one GPU node, a state directory.
struct FakeMemo {
  testing::TempDir root{"cuda_probe_memo"};
  FakeMemo() {
    std::ofstream(root.path() / "boot_id") << "boot-1\n";
    std::filesystem::create_directories(root.path() / "dev");
    std::ofstream(root.path() / "dev" / "nvidia0") << "";
  }
  GpuMemo memo() const {
    return GpuMemo(root.path() / "state", GpuMemoSources{root.path() / "boot_id", root.path() / "dev", "0"});
  }
};

TEST_CASE("what NVML listed is kept for the boot: the next process asks neither NVML nor a child") {
  FakeMemo memo;
  FakeDriver first;
  first.nvml = std::vector<ComputeCapability>{{9, 0}};
  const CudaProbe probed = probe_cuda(first.access(), memo.memo());
  CHECK(probed.from_nvml);
  CHECK_FALSE(probed.remembered);

  FakeDriver later;  // a later process: NVML would answer otherwise, and is not asked
  later.nvml = std::vector<ComputeCapability>{{8, 0}};
  const CudaProbe recalled = probe_cuda(later.access(), memo.memo());
  CHECK(recalled.remembered);
  CHECK(later.nvml_calls == 0);
  CHECK(later.child_calls == 0);
  CHECK(later.version_calls == 1);  // the driver's version is part of the key: always asked
  REQUIRE(recalled.gpus.size() == 1);
  CHECK(recalled.gpus[0].to_string() == "9.0");

  FakeDriver upgraded;  // another driver: another key, probed again
  upgraded.version = Version{13, 1};
  upgraded.nvml = std::vector<ComputeCapability>{{8, 0}};
  const CudaProbe after_upgrade = probe_cuda(upgraded.access(), memo.memo());
  CHECK_FALSE(after_upgrade.remembered);
  CHECK(upgraded.nvml_calls == 1);
  CHECK(after_upgrade.gpus[0].to_string() == "8.0");
}

TEST_CASE("a child's list is kept, but not an empty one (a child that failed gives one too)") {
  FakeMemo memo;
  FakeDriver failed;
  failed.child_answer.clear();
  CHECK(probe_cuda(failed.access(), memo.memo()).forked);
  FakeDriver next;
  const CudaProbe retried = probe_cuda(next.access(), memo.memo());
  CHECK(next.child_calls == 1);
  CHECK_FALSE(retried.remembered);
  FakeDriver after;
  const CudaProbe recalled = probe_cuda(after.access(), memo.memo());
  CHECK(recalled.remembered);
  CHECK(after.child_calls == 0);
}

TEST_CASE("where CUDA is initialised here, the process's own list wins over the memo") {
  FakeMemo memo;
  FakeDriver first;
  first.nvml = std::vector<ComputeCapability>{{9, 0}};
  (void)probe_cuda(first.access(), memo.memo());
  FakeDriver torch;
  torch.initialised = std::vector<ComputeCapability>{{8, 0}};
  const CudaProbe probe = probe_cuda(torch.access(), memo.memo());
  CHECK_FALSE(probe.remembered);
  CHECK(probe.gpus[0].to_string() == "8.0");
}

}  // namespace
}  // namespace kernelhub::resolver
