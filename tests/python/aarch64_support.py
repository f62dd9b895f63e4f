"""The aarch64 build (scripts/aarch64.sh) from the tests: its folders, and its programs run under
qemu-user with the aarch64 glibc and libstdc++ of Debian's cross packages.

KERNELHUB_AARCH64_BUILD_DIR (default <repo>/build-aarch64) and KERNELHUB_AARCH64_PREFIX (the aarch64
inputs: LibTorch, libtvm_ffi.so, the aarch64 python3.11; `scripts/aarch64.sh prefix` prints it) are
set by `scripts/aarch64.sh test`; without them, or without the build, the tests skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))  # the x86_64 build
AARCH64_BUILD = Path(os.environ.get("KERNELHUB_AARCH64_BUILD_DIR", ROOT / "build-aarch64"))
SYSROOT = "/usr/aarch64-linux-gnu"
QEMU = shutil.which("qemu-aarch64-static")


def prefix() -> Path:
    value = os.environ.get("KERNELHUB_AARCH64_PREFIX")
    if not value or not Path(value, ".complete").exists():
        pytest.skip("KERNELHUB_AARCH64_PREFIX names no aarch64 inputs (scripts/aarch64.sh test sets it)")
    return Path(value)


def aarch64_program(name: str) -> Path:
    prefix()  # the aarch64 tests run from scripts/aarch64.sh test, once: not again in the x86_64 suites
    path = AARCH64_BUILD / "bin" / name
    if QEMU is None or not path.exists():
        pytest.skip(f"{path} is not built, or no qemu-aarch64-static (make aarch64)")
    return path


def runtime_library() -> Path:
    """The aarch64 libtvm_ffi.so (PyPI's apache-tvm-ffi wheel for aarch64)."""
    return prefix() / "tvm_ffi" / "lib" / "libtvm_ffi.so"


def run_aarch64(program: Path | str, *args: str, env: dict | None = None, timeout: float = 600,
                **kwargs) -> subprocess.CompletedProcess:
    """`program args` under qemu-aarch64; `env` is the program's whole environment. The aarch64
    libstdc++ (what libtvm_ffi.so, the kernels and LibTorch need) is the cross packages', which the
    aarch64 dynamic linker does not search by itself: LD_LIBRARY_PATH names it, for the guest only."""
    if QEMU is None:
        pytest.skip("no qemu-aarch64-static (apt-get install qemu-user-static)")
    env = dict(env if env is not None else os.environ)
    library_path = ":".join(p for p in (env.pop("LD_LIBRARY_PATH", ""), f"{SYSROOT}/lib") if p)
    return subprocess.run([QEMU, "-L", SYSROOT, "-E", f"LD_LIBRARY_PATH={library_path}", str(program), *args],
                          capture_output=True, text=True, env=env, timeout=timeout, **kwargs)


def without_torch(env: dict) -> dict:
    """No Python environment for the torch-free CLI to read a torch from: it selects as a process
    without LibTorch (tvm-ffi builds only)."""
    env = {k: v for k, v in env.items() if k not in ("VIRTUAL_ENV", "KERNELHUB_TORCH", "PYTHONPATH")}
    env["PATH"] = "/nonexistent"
    return env


def variant_dirs(build: Path, pattern: str = "*") -> list[Path]:
    return sorted(p for p in (build / "kernels" / "build").glob(pattern) if p.is_dir())
