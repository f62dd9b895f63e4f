"""The installed wheel (scripts/test_wheel.sh installs it and points KERNELHUB_PACKAGE_DIR at it):
the metadata a package index shows, the manylinux_2_28 tag for this Python, no torch requirement,
and a package that imports from where it was installed and needs nothing from the system but
glibc 2.28: libcurl, OpenSSL and the C++ runtime (LLVM's libc++) are linked into _core, which
exports only its module init, so it shares a process with torch (GCC's libstdc++, its own
libraries) without binding to any of torch's symbols or lending it any of its own.
Skipped for the build's package (<build>/python), which is no install."""

from __future__ import annotations

import email
import json
import os
import re
import subprocess
import sys
import sysconfig

from pathlib import Path

import pytest
from elf_requirements import elf_files, read, version_tuple
from shim_support import PACKAGE_DIR, cpu_variant_dir, import_shim

GLIBC_LIBRARIES = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "ld-linux-x86-64.so.2"}


@pytest.fixture(scope="module")
def dist_info():
    import_shim()
    found = sorted(PACKAGE_DIR.glob("kernelhub-*.dist-info"))
    if not found:
        pytest.skip(f"no installed wheel under {PACKAGE_DIR} (scripts/test_wheel.sh installs one)")
    (path,) = found
    return path


def test_index_metadata(dist_info):
    import kernelhub

    metadata = email.message_from_string((dist_info / "METADATA").read_text())
    assert metadata["Name"] == "kernelhub" and metadata["Version"] == kernelhub.__version__
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata["Requires-Python"] == ">=3.10"
    assert "kernel" in metadata["Summary"] and "get_kernel" in metadata.get_payload()  # the readme
    classifiers = metadata.get_all("Classifier")
    assert f"Programming Language :: Python :: {sys.version_info.major}.{sys.version_info.minor}" in classifiers
    assert "Operating System :: POSIX :: Linux" in classifiers
    # No torch requirement (any torch the process imports will do); the kernels extra for kernelize,
    # pinned to the release the shim's tests run (the environment's).
    import importlib.metadata

    assert metadata.get_all("Provides-Extra") == ["kernels"]
    assert metadata.get_all("Requires-Dist") == [f'kernels=={importlib.metadata.version("kernels")}; extra == "kernels"']
    assert importlib.metadata.version("kernels") == kernelhub.KERNELS_COMPATIBLE_VERSION


def test_a_manylinux_2_28_wheel_for_this_python(dist_info):
    wheel = email.message_from_string((dist_info / "WHEEL").read_text())
    assert wheel["Root-Is-Purelib"] == "false"
    (tag,) = wheel.get_all("Tag")
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    interpreter, abi, platform = tag.split("-")
    assert (interpreter, abi) == (python, python)
    arch = sysconfig.get_platform().split("-")[-1]
    assert platform == f"manylinux_2_28_{arch}", tag


def test_auditwheel_reads_it_as_manylinux_2_28():
    wheel = os.environ.get("KERNELHUB_WHEEL")
    if not wheel:
        pytest.skip("KERNELHUB_WHEEL is not set (scripts/test_wheel.sh sets it to the wheel it built)")
    shown = subprocess.run([sys.executable, "-m", "auditwheel", "show", wheel], capture_output=True, text=True,
                           check=True).stdout
    text = " ".join(shown.split())
    assert re.search(r'is consistent with the following platform tag: "manylinux_2_(\d+)_x86_64"', text), text
    consistent = int(re.search(r'following platform tag: "manylinux_2_(\d+)_x86_64"', text)[1])
    assert consistent <= 28, text  # what it needs allows 2.28 or older
    assert "manylinux_2_28_x86_64" in text, text


def test_every_elf_file_needs_only_glibc_2_28(dist_info):
    files = elf_files(PACKAGE_DIR / "kernelhub")
    assert [f.name for f in files if f.name.startswith("_core")], files
    assert not (PACKAGE_DIR / "kernelhub.libs").exists()  # nothing to graft: all of it is in _core
    for path in files:
        elf = read(path)
        assert set(elf.needed) <= GLIBC_LIBRARIES, (path, elf.needed)  # no libstdc++, libcurl, libssl
        assert elf.newest["GLIBC"] <= version_tuple("2.28"), (path, elf.newest)
        assert "GLIBCXX" not in elf.newest and "CXXABI" not in elf.newest, (path, elf.newest)
        assert elf.exported == ["PyInit__core"], (path, elf.exported[:10])
        assert elf.problems(version_tuple("2.28")) == []


def test_imports_from_the_install(dist_info):
    code = "import kernelhub, kernelhub._core as c; print(kernelhub.__file__); print(c.__file__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(PACKAGE_DIR), "PATH": "/usr/bin:/bin"}).stdout.split()
    assert [p.startswith(str(PACKAGE_DIR / "kernelhub")) for p in out] == [True, True], out


@pytest.mark.parametrize("torch_first", [True, False], ids=["torch-first", "kernelhub-first"])
def test_shares_a_process_with_torch_binding_nothing_of_it(dist_info, torch_first, tmp_path):
    """Both import orders, then a kernel loaded and run: the dynamic linker's bindings show that no
    symbol _core uses comes from torch's libraries or libstdc++, and none of torch's from _core."""
    imports = "import torch; import kernelhub" if torch_first else "import kernelhub; import torch"
    code = (f"{imports}\n"
            f"k = kernelhub.get_local_kernel({str(cpu_variant_dir().parent.parent)!r})\n"
            "x = torch.randn(4, 64, dtype=torch.float64); w = torch.ones(64, dtype=torch.float64)\n"
            "out = k.rms_norm(x, w, 1e-6)\n"
            "ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)\n"
            "print('max error', float((out - ref).abs().max()))\n")
    env = dict(os.environ, PYTHONPATH=str(PACKAGE_DIR), LD_DEBUG="bindings", LD_DEBUG_OUTPUT=str(tmp_path / "ld"))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert float(result.stdout.split()[-1]) < 1e-10, result.stdout
    bindings = "".join(p.read_text(errors="replace") for p in tmp_path.glob("ld.*"))
    core = "kernelhub/_core"
    assert f"binding file {PACKAGE_DIR / core}" in bindings  # the dynamic linker did report _core's bindings
    # "binding file A [0] to B [0]: normal symbol `name'"
    pairs = re.findall(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: \S+ symbol `([^']+)'", bindings)
    # What _core takes from elsewhere: glibc, and the Python C API from the interpreter.
    from_core = {Path(to).name for src, to, sym in pairs if core in src and core not in to}
    assert all(re.match(r"(libc|libm|libpthread|libdl|ld-linux-x86-64)\.so|libpython3|python3", lib)
               for lib in from_core), sorted(from_core)
    # What anything else takes from _core: at most its module init.
    into_core = {sym for src, to, sym in pairs if core in to and core not in src}
    assert into_core <= {"PyInit__core"}, sorted(into_core)[:20]
