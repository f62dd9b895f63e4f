"""The built reference-kernel libraries stay within manylinux_2_28: the newest glibc, libstdc++ and
C++ ABI symbol versions they import are ones a glibc 2.28 / GCC 8 system provides (the tvm-ffi
libraries: GCC 9's libstdc++, see TVM_FFI_LIMITS)."""

import glob
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
# manylinux_2_28 (PEP 600, AlmaLinux 8): glibc 2.28, libstdc++ of GCC 8.
LIMITS = {"GLIBC": (2, 28), "GLIBCXX": (3, 4, 25), "CXXABI": (1, 3, 11)}
# A tvm-ffi library includes TVM-FFI's headers, whose std::ostringstream default constructor is
# GLIBCXX_3.4.26 (GCC 9's libstdc++); nothing newer (tvm-ffi-ext/aten_shim/libstdcxx_compat.cpp).
TVM_FFI_LIMITS = dict(LIMITS, GLIBCXX=(3, 4, 26))
# The CUDA tvm-ffi library links CUDA's static runtime (a torch-free process needs only the driver),
# whose pthread, semaphore and dlvsym calls bind at link time to this machine's glibc: GLIBC_2.34,
# where those moved into libc. kernel-builder links it against a glibc 2.28 sysroot; a build here
# has none, so this one variant needs glibc 2.34 (RHEL 9, Ubuntu 22.04), and the test holds it there.
TVM_FFI_CUDA_LIMITS = dict(TVM_FFI_LIMITS, GLIBC=(2, 34))

LIBRARIES = sorted(glob.glob(str(BUILD / "kernels" / "build" / "*" / "*.so")))


def required_versions(library: str) -> dict:
    out = subprocess.run(["objdump", "-T", library], capture_output=True, text=True, check=True).stdout
    newest: dict = {}
    for name, version in re.findall(r"\b(GLIBC|GLIBCXX|CXXABI)_([0-9.]+)\b", out):
        parsed = tuple(int(x) for x in version.split("."))
        newest[name] = max(newest.get(name, parsed), parsed)
    return newest


@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump (binutils) is not installed")
@pytest.mark.parametrize("library", LIBRARIES, ids=[Path(p).parent.name for p in LIBRARIES])
def test_symbol_versions_within_manylinux_2_28(library):
    newest = required_versions(library)
    assert "GLIBC" in newest, "objdump found no glibc symbol versions; the check would be vacuous"
    variant = Path(library).parent.name
    limits = LIMITS
    if variant.startswith("tvm-ffi"):
        limits = TVM_FFI_CUDA_LIMITS if "-cu" in variant else TVM_FFI_LIMITS
    for name, limit in limits.items():
        if name in newest:
            assert newest[name] <= limit, f"{Path(library).name} needs {name}_{'.'.join(map(str, newest[name]))}"


def test_libraries_were_built():
    assert LIBRARIES, f"no kernel libraries under {BUILD / 'kernels' / 'build'}"
