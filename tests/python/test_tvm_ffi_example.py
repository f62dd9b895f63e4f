"""The torch-free example (examples/tvm_ffi): a plain C++ program built against a temporary install of
the C++ package (find_package(kernelhub COMPONENTS tvm_ffi): no LibTorch, no Python), which gets the
reference kernels' tvm-ffi variant from `kernelhub serve`, calls rms_norm on tensors it allocates and
checks the result against its own float64 reference. The process never maps LibTorch or libpython:
the dynamic linker's own log (LD_DEBUG=libs) lists every library it loads, from start to exit.

The install carries the TVM-FFI runtime it was built against (lib/kernelhub/, with its license) and
the program looks there (its RUNPATH): it runs as built where no Python is to be found. Without
that runtime, the program and the installed `kernelhub` say where they looked and what to set."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, HfApi

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
REPO = "acme/reference-kernels"


def variant_dirs() -> list[Path]:
    return [Path(p) for p in sorted(glob.glob(str(BUILD / "kernels" / "build" / "*-cpu-*")))]


def publish(server) -> None:
    """The torch and tvm-ffi CPU variants side by side, as hub-publish would put them."""
    api = HfApi(endpoint=server.url, token=server.write_token)
    api.create_repo(REPO, repo_type="kernel", exist_ok=True)
    api.create_branch(REPO, repo_type="kernel", branch="v1", exist_ok=True)
    ops = [CommitOperationAdd(path_in_repo=f"build/{v.name}/{f.relative_to(v).as_posix()}", path_or_fileobj=str(f))
           for v in variant_dirs() for f in sorted(v.rglob("*")) if f.is_file() and "__pycache__" not in f.parts]
    api.create_commit(REPO, repo_type="kernel", revision="v1", operations=ops, commit_message="publish")


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    """The example, built against a temporary install of this build (cmake --install)."""
    if not any(v.name.startswith("tvm-ffi") for v in variant_dirs()):
        pytest.skip("the reference kernels' tvm-ffi CPU variant is not built (reference_kernels_tvm_ffi_cpu)")
    if not (BUILD / "cmake_install.cmake").exists():
        pytest.skip(f"{BUILD} is not a configured build")
    if re.search(r"^KERNELHUB_SANITIZE:STRING=.", (BUILD / "CMakeCache.txt").read_text(), re.M):
        pytest.skip("a sanitizer build: its instrumented libraries do not link into the plain example")
    work = tmp_path_factory.mktemp("tvm-ffi-example")
    prefix = work / "prefix"
    subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix), "--component", "cpp"], check=True,
                   capture_output=True, timeout=600)
    assert (prefix / "include" / "kernelhub" / "tvm_ffi.hpp").is_file()
    assert (prefix / "include" / "kernelhub" / "third_party" / "dlpack" / "dlpack.h").is_file()
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    configure = subprocess.run(["cmake", "-S", str(ROOT / "examples" / "tvm_ffi"), "-B", str(work / "build"),
                                "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}", "-DKERNELHUB_EXAMPLE_CPU_ONLY=ON",
                                "-DCMAKE_BUILD_TYPE=Release"],
                               capture_output=True, text=True, env=env, timeout=600)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    # The torch-free component looks for neither Torch nor Python.
    cache = (work / "build" / "CMakeCache.txt").read_text()
    assert not re.search(r"^(Torch_DIR|Python3?_EXECUTABLE|tvm_ffi_DIR):", cache, re.M), cache
    built = subprocess.run(["cmake", "--build", str(work / "build")], capture_output=True, text=True, env=env,
                           timeout=900)
    assert built.returncode == 0, built.stdout + built.stderr
    binary = work / "build" / "tvm_ffi_rms_norm"
    needed = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True).stdout
    assert not re.search(r"libtorch|libc10|libpython|libtvm_ffi", needed), needed
    # Not linked to the runtime: told where the package carries it.
    assert f"[{prefix / 'lib' / 'kernelhub'}" in needed or f":{prefix / 'lib' / 'kernelhub'}" in needed, needed
    return binary


def carried_runtime(example: Path) -> Path:
    """The runtime the install carries, beside its license."""
    prefix = example.parent.parent / "prefix"
    runtime = prefix / "lib" / "kernelhub" / "libtvm_ffi.so"
    assert runtime.is_file() and (prefix / "share" / "doc" / "kernelhub" / "apache-tvm-ffi" / "LICENSE").is_file()
    config = (prefix / "lib" / "cmake" / "kernelhub" / "kernelhubConfig.cmake").read_text()
    assert 'set(kernelhub_TVM_FFI_RUNTIME "${PACKAGE_PREFIX_DIR}/lib/kernelhub/libtvm_ffi.so")' in config, config
    return runtime


def no_python_env(server, tmp_path: Path) -> dict:
    """No Python to be found: no python3 on PATH, no VIRTUAL_ENV, no PYTHONPATH."""
    return {"HF_ENDPOINT": server.url, "HF_HUB_CACHE": str(tmp_path / "cache"), "KERNELHUB_TRUSTED": "acme",
            "PATH": "/nonexistent", "HOME": str(tmp_path)}


@contextmanager
def runtime_removed(example: Path):
    runtime = carried_runtime(example)
    aside = runtime.with_name("libtvm_ffi.so.aside")
    runtime.rename(aside)
    try:
        yield
    finally:
        aside.rename(runtime)


def test_the_example_gets_and_runs_rms_norm_without_libtorch(example, kernelhub_serve, tmp_path):
    server = kernelhub_serve()
    publish(server)
    env = dict(os.environ, HF_ENDPOINT=server.url, HF_HUB_CACHE=str(tmp_path / "cache"), HF_HUB_DISABLE_XET="1",
               KERNELHUB_TRUSTED="acme", LD_DEBUG="libs", LD_DEBUG_OUTPUT=str(tmp_path / "ld"))
    env["VIRTUAL_ENV"] = sys.prefix  # a Python environment with apache-tvm-ffi: still the runtime built with
    for name in ("HF_TOKEN", "LOCAL_KERNELS", "HF_HUB_OFFLINE", "LD_PRELOAD"):
        env.pop(name, None)
    r = subprocess.run([str(example), REPO], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"^variant tvm-ffi01-cpu-\S+ \(TVM-FFI 0\.1\.", r.stdout, re.M), r.stdout
    assert "rms_norm fp32 [64, 4096] on cpu: max error" in r.stdout and "rms_norm bf16" in r.stdout
    assert r.stdout.count(" ok\n") == 2, r.stdout
    assert "wrong dtype refused by the kernel: RuntimeError: rms_norm: out has dtype Long, input has Float" in r.stdout
    assert "LibTorch or Python mapped: no" in r.stdout
    # Every library the dynamic linker loaded, over the whole run: libtvm_ffi and the kernel, no torch.
    log = "".join(p.read_text(errors="replace") for p in tmp_path.glob("ld.*"))
    loaded = set(re.findall(r"file=(\S+) \[0\];  needed by|calling init: (\S+)", log))
    inits = {m for pair in loaded for m in pair if m}
    assert any("libtvm_ffi.so" in p for p in inits), inits
    # The kernel, by the path of its file in the cache (snapshots link to blobs/).
    assert any(p.startswith(str(tmp_path / "cache")) for p in inits), inits
    assert not [p for p in inits if re.search(r"libtorch|libc10|libpython", p)], inits


def test_with_no_python_the_example_runs_as_built(example, kernelhub_serve, tmp_path):
    server = kernelhub_serve()
    publish(server)
    r = subprocess.run([str(example), REPO], capture_output=True, text=True, env=no_python_env(server, tmp_path),
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"from the runtime `{example}` was built with, from its RUNPATH)" in r.stdout, r.stdout
    assert r.stdout.count(" ok\n") == 2, r.stdout
    # The installed CLI too: a tvm-ffi build loads in `kernelhub get` with the runtime beside it.
    kernelhub = example.parent.parent / "prefix" / "bin" / "kernelhub"
    got = subprocess.run([str(kernelhub), "get", REPO, "--version", "1", "--json"], capture_output=True, text=True,
                         env=no_python_env(server, tmp_path), timeout=300)
    assert got.returncode == 0, got.stdout + got.stderr
    assert json.loads(got.stdout)["tvm_ffi"]["path"] == str(carried_runtime(example).resolve())


def test_without_a_runtime_the_example_and_the_cli_say_where_they_looked(example, kernelhub_serve, tmp_path):
    server = kernelhub_serve()
    publish(server)
    env = no_python_env(server, tmp_path)
    with runtime_removed(example):
        r = subprocess.run([str(example), REPO], capture_output=True, text=True, env=env, timeout=300)
        kernelhub = example.parent.parent / "prefix" / "bin" / "kernelhub"
        cli = subprocess.run([str(kernelhub), "get", REPO, "--version", "1"], capture_output=True, text=True, env=env,
                             timeout=300)
    assert r.returncode == 1
    assert "no TVM-FFI runtime (libtvm_ffi.so) found" in r.stderr
    assert f"none is where this program (`{example}`) was built to look" in r.stderr, r.stderr
    assert "pip install apache-tvm-ffi" in r.stderr
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").rglob("*.so")), "downloaded anyway"
    # The CLI is built with the TVM-FFI loader; what it lacks is the runtime, and it says so.
    assert cli.returncode == 3, cli.stdout + cli.stderr
    assert "which kernelhub loads with a TVM-FFI runtime: no TVM-FFI runtime (libtvm_ffi.so) found" in cli.stderr
    assert f"none is where this program (`{kernelhub}`) was built to look" in cli.stderr, cli.stderr
    assert "KERNELHUB_TVM_FFI_LIBRARY" in cli.stderr and "TVM-FFI loader" not in cli.stderr
