"""`kernelhub get` and tvm-ffi builds: the torch-free `kernelhub` selects among torch and tvm-ffi
variants as kernels 0.19.1 ranks them, loads a tvm-ffi variant in its own process (no kernelhub-get,
no LibTorch: LD_DEBUG's log of every library loaded proves it) and lists its functions in --json;
and the bad inputs: a runtime of another version, a "tvm-ffi" library that needs LibTorch; with no
Python at all, the runtime it was built with."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
KERNELHUB = BUILD / "bin" / "kernelhub"
REPO = "kernelhub/reference-kernels"


def variant(pattern: str) -> Path:
    found = glob.glob(str(BUILD / "kernels" / "build" / pattern))
    if len(found) != 1:
        pytest.skip(f"need one {pattern} under {BUILD / 'kernels' / 'build'} (build reference_kernels), found {found}")
    return Path(found[0])


def runtime_library() -> str:
    import tvm_ffi.libinfo

    return tvm_ffi.libinfo.find_libtvm_ffi()


def kernel_dir(tmp_path: Path, *variants: tuple[Path, str]) -> Path:
    """A kernel directory holding copies of `variants`, each under the name given."""
    for source, name in variants:
        shutil.copytree(source, tmp_path / "kernel" / "build" / name, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "kernel"


def get(local: Path, *args: str, torch: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    """`kernelhub get` of LOCAL_KERNELS=REPO=local; without torch: no Python environment to find one in."""
    if not KERNELHUB.exists():
        pytest.skip(f"{KERNELHUB} is not built")
    e = dict(os.environ, LOCAL_KERNELS=f"{REPO}={local}", KERNELHUB_TVM_FFI_LIBRARY=runtime_library())
    if not torch:
        e.pop("VIRTUAL_ENV", None)
        e.pop("KERNELHUB_TORCH", None)
        e["PATH"] = "/usr/bin:/bin" if not Path("/usr/bin/python3").exists() else "/nonexistent"
    e.update(env or {})
    return subprocess.run([str(KERNELHUB), "get", REPO, *args], capture_output=True, text=True, env=e, timeout=300)


def test_with_torch_the_torch_build_ranks_first_and_kernelhub_get_loads_it(tmp_path):
    local = kernel_dir(tmp_path, (variant("torch*-cpu-*"), variant("torch*-cpu-*").name),
                       (variant("tvm-ffi*-cpu-*"), variant("tvm-ffi*-cpu-*").name))
    r = get(local, "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    # Chosen as kernels 0.19.1 ranks them (torch before tvm-ffi), then loaded by kernelhub-get, whose
    # own trace says the tvm-ffi build is not for get_kernel.
    assert got["framework"] == "torch" and got["variant"] == variant("torch*-cpu-*").name
    (tvm,) = [d for d in got["decisions"] if d["variant"].startswith("tvm-ffi")]
    assert tvm["code"] == "tvm_ffi_not_loadable"


def test_without_torch_the_tvm_ffi_build_loads_in_kernelhub_itself(tmp_path):
    local = kernel_dir(tmp_path, (variant("torch*-cpu-*"), variant("torch*-cpu-*").name),
                       (variant("tvm-ffi*-cpu-*"), variant("tvm-ffi*-cpu-*").name))
    r = get(local, "--json", torch=False, env={"LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": str(tmp_path / "ld")})
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["framework"] == "tvm-ffi"
    assert got["variant"] == variant("tvm-ffi*-cpu-*").name
    assert got["tvm_ffi"]["version"].startswith("0.1.") and got["tvm_ffi"]["found_by"] == "KERNELHUB_TVM_FFI_LIBRARY"
    functions = {f["name"]: f["signature"] for f in got["functions"]}
    assert functions["rms_norm_cpu"] == "rms_norm_cpu(Tensor, Tensor, Optional[Tensor], float) -> None"
    assert functions["adaln_cpu"] == "adaln_cpu(Tensor, Tensor, Optional[Tensor], Tensor, Tensor, float, bool) -> None"
    (torch_decision,) = [d for d in got["decisions"] if d["variant"].startswith("torch")]
    assert torch_decision["reason"] == "needs LibTorch, which this process does not have; only tvm-ffi variants load here"
    assert torch_decision["code"] == "no_libtorch"
    log = "".join(p.read_text(errors="replace") for p in tmp_path.glob("ld.*"))
    assert "libtvm_ffi.so" in log
    assert not re.search(r"libtorch|libc10|libpython|kernelhub-get", log), "LibTorch, Python or kernelhub-get ran"
    text = get(local, torch=False)
    assert text.returncode == 0, text.stderr
    assert "(tvm-ffi)" in text.stdout and "rms_norm_cpu(Tensor, Tensor, Optional[Tensor], float) -> None" in text.stdout


def test_a_library_that_needs_libtorch_is_not_a_tvm_ffi_kernel(tmp_path):
    torch_cpu = variant("torch*-cpu-*")
    local = kernel_dir(tmp_path, (torch_cpu, "tvm-ffi01-cpu-x86_64-linux"))
    r = get(local, "--json", torch=False)
    assert r.returncode == 4
    assert "it needs LibTorch" in r.stderr and "not a tvm-ffi kernel" in r.stderr, r.stderr


def test_a_runtime_of_another_version_is_named(tmp_path):
    fake = BUILD / "tests" / "tvm_ffi_loader" / "runtime-0.2" / "libtvm_ffi.so"
    if not fake.exists():
        pytest.skip(f"{fake} is not built (tests/tvm_ffi_loader)")
    local = kernel_dir(tmp_path, (variant("tvm-ffi*-cpu-*"), variant("tvm-ffi*-cpu-*").name))
    r = get(local, "--json", torch=False, env={"KERNELHUB_TVM_FFI_LIBRARY": str(fake)})
    assert r.returncode == 4
    assert "tvm-ffi version (0.1) does not match environment tvm-ffi version (0.2)" in r.stderr, r.stderr


def test_with_no_python_and_no_torch_the_runtime_kernelhub_was_built_with_loads_it(tmp_path):
    local = kernel_dir(tmp_path, (variant("tvm-ffi*-cpu-*"), variant("tvm-ffi*-cpu-*").name))
    e = {"LOCAL_KERNELS": f"{REPO}={local}", "PATH": "/nonexistent", "HOME": str(tmp_path)}
    r = subprocess.run([str(KERNELHUB), "get", REPO, "--json"], capture_output=True, text=True, env=e, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads(r.stdout)
    # Where the build found it (the build's kernelhub has its folder in its RUNPATH; an installed one,
    # the lib/kernelhub/ of its install: test_tvm_ffi_example.py).
    assert got["framework"] == "tvm-ffi" and "was built with, from its RUNPATH" in got["tvm_ffi"]["found_by"], got["tvm_ffi"]
    assert Path(got["tvm_ffi"]["path"]).resolve() == Path(runtime_library()).resolve()
