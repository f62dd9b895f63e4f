"""The GPUs a torch-free process learns from NVML are kept for the boot (resolver's gpu_memo.hpp):
the next process with the same driver, device nodes and CUDA_VISIBLE_DEVICES reads them from the
state directory and never starts NVML, whose start is 17-21 ms of a warm get on an H100
(bench/client/TORCH_FREE_GET.md). Run against a stand-in driver: a libcuda.so.1 and a
libnvidia-ml.so.1 compiled here, which report driver 13.0 and two 9.0 GPUs, and count NVML's starts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import KERNELHUB_BIN

FAKE_CUDA = r"""
int cuDriverGetVersion(int* v) { *v = 13000; return 0; }
int cuDeviceGetCount(int* n) { (void)n; return 3; }  /* CUDA_ERROR_NOT_INITIALIZED */
int cuDeviceGet(int* d, int i) { *d = i; return 0; }
int cuDeviceGetAttribute(int* v, int a, int d) { (void)a; (void)d; *v = 0; return 0; }
int cuInit(unsigned f) { (void)f; return 100; }  /* no device: the child lists none */
"""

FAKE_NVML = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int nvmlInit_v2(void) {
  const char* log = getenv("FAKE_NVML_LOG");
  FILE* f = log ? fopen(log, "a") : NULL;
  if (f) { fputs("init\n", f); fclose(f); }
  return 0;
}
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned* n) { *n = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** h) { *h = (void*)(size_t)(i + 1); return 0; }
int nvmlDeviceGetCudaComputeCapability(void* h, int* major, int* minor) { (void)h; *major = 9; *minor = 0; return 0; }
int nvmlDeviceGetUUID(void* h, char* out, unsigned n) { snprintf(out, n, "GPU-0000000%zu", (size_t)h); return 0; }
"""


@pytest.fixture
def driver(tmp_path: Path) -> Path:
    """A folder holding the stand-in driver's two libraries."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the stand-in driver")
    lib = tmp_path / "driver"
    lib.mkdir()
    for name, source in (("libcuda.so.1", FAKE_CUDA), ("libnvidia-ml.so.1", FAKE_NVML)):
        (lib / (name + ".c")).write_text(source)
        subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib / name), str(lib / (name + ".c"))], check=True)
    return lib


def machine(driver: Path, tmp_path: Path, visible: str | None = None) -> tuple[dict, int]:
    """`kernelhub env --json` on the stand-in driver: the machine it describes, and how many times
    NVML was started so far."""
    if not KERNELHUB_BIN.exists():
        pytest.skip(f"{KERNELHUB_BIN} is not built")
    log = tmp_path / "nvml.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KERNELHUB_", "CUDA_VISIBLE"))}
    env.update(LD_LIBRARY_PATH=str(driver), FAKE_NVML_LOG=str(log), KERNELHUB_STATE_DIR=str(tmp_path / "state"),
               KERNELHUB_BACKEND="cpu", HOME=str(tmp_path / "home"))
    if visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    r = subprocess.run([str(KERNELHUB_BIN), "env", "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), len(log.read_text().splitlines()) if log.exists() else 0


def test_the_second_process_of_a_boot_reads_the_gpus_nvml_listed(driver, tmp_path):
    first, starts = machine(driver, tmp_path)
    assert first["cuda_driver"] == "13.0"
    assert [g["compute_capability"] for g in first["gpus"]] == ["9.0", "9.0"]
    assert starts == 1
    kept = list((tmp_path / "state" / "gpus").iterdir())
    assert len(kept) == 1 and oct(kept[0].stat().st_mode & 0o777) == "0o600"

    second, starts = machine(driver, tmp_path)
    assert second["gpus"] == first["gpus"] and second["cuda_driver"] == "13.0"
    assert starts == 1, "the second process started NVML again"


def test_another_cuda_visible_devices_is_asked_for_and_kept_apart(driver, tmp_path):
    machine(driver, tmp_path)
    one, starts = machine(driver, tmp_path, visible="1")
    assert [g["compute_capability"] for g in one["gpus"]] == ["9.0"]
    assert starts == 2
    again, starts = machine(driver, tmp_path, visible="1")
    assert again["gpus"] == one["gpus"] and starts == 2
    both, starts = machine(driver, tmp_path)
    assert len(both["gpus"]) == 2 and starts == 2  # the first key's file is still there


def test_a_damaged_file_is_probed_again_and_rewritten(driver, tmp_path):
    machine(driver, tmp_path)
    (kept,) = (tmp_path / "state" / "gpus").iterdir()
    kept.write_text(kept.read_text().replace("gpus=9.0,9.0", "gpus=8.0,"))
    again, starts = machine(driver, tmp_path)
    assert [g["compute_capability"] for g in again["gpus"]] == ["9.0", "9.0"] and starts == 2
    assert kept.read_text().endswith("gpus=9.0,9.0\n")
