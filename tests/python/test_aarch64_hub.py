"""aarch64 end to end, under qemu: the x86_64 `kernelhub serve` holds the reference kernels of both
machines (published together by the x86_64 hub-publish); the aarch64 `kernelhub get` selects,
downloads, verifies and loads the aarch64 tvm-ffi variant, and the aarch64 tvm-ffi example calls its
rms_norm against its own float64 reference. Then the bad inputs, each a typed error before anything
is loaded: a library of the other machine in a folder named for this one (both ways), a repo with
variants for the other machine only, an aarch64 library cut short, and the same from Python."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aarch64_support import (AARCH64_BUILD, BUILD, aarch64_program, prefix, run_aarch64, runtime_library,
                             variant_dirs, without_torch)

REPO = "acme/reference-kernels"
HUB_PUBLISH = BUILD / "bin" / "hub-publish"
KERNELHUB = BUILD / "bin" / "kernelhub"


def one_variant(build: Path, pattern: str) -> Path:
    found = variant_dirs(build, pattern)
    if len(found) != 1:
        pytest.skip(f"need one {pattern} in {build / 'kernels' / 'build'} (make build, make aarch64), found {found}")
    return found[0]


def aarch64_build() -> Path:
    prefix()  # run from scripts/aarch64.sh test
    return AARCH64_BUILD


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """One x86_64 server holding both machines' CPU variants, published by the x86_64 hub-publish."""
    from conftest import _start_server

    if not HUB_PUBLISH.exists():
        pytest.skip(f"{HUB_PUBLISH} is not built")
    tmp = tmp_path_factory.mktemp("aarch64-hub")
    build_dir = tmp / "publish" / "build"
    for variant in [*variant_dirs(BUILD, "*-cpu-x86_64-linux"), *variant_dirs(aarch64_build(), "*-aarch64-linux")]:
        shutil.copytree(variant, build_dir / variant.name, ignore=shutil.ignore_patterns("__pycache__"))
    names = sorted(p.name for p in build_dir.iterdir())
    assert any(n.endswith("-aarch64-linux") for n in names) and any(n.endswith("-x86_64-linux") for n in names), names
    server = _start_server(tmp / "server", [])
    env = dict(os.environ, HF_ENDPOINT=server.url, HF_TOKEN=server.write_token, HF_HUB_DISABLE_XET="1")
    published = subprocess.run([str(HUB_PUBLISH), REPO, "--build-dir", str(build_dir), "--version", "1", "--create"],
                               capture_output=True, text=True, env=env, timeout=600)
    assert published.returncode == 0, published.stdout + published.stderr
    server.variants = names
    yield server
    server.stop()


def guest_env(server, tmp_path: Path, **extra: str) -> dict:
    env = without_torch(dict(os.environ))
    env.pop("HF_TOKEN", None)
    env.pop("LOCAL_KERNELS", None)
    env.update(HF_ENDPOINT=server.url, HF_HOME=str(tmp_path / "hf"), HF_HUB_DISABLE_XET="1",
               KERNELHUB_STATE_DIR=str(tmp_path / "state"), KERNELHUB_TVM_FFI_LIBRARY=str(runtime_library()), **extra)
    return env


def test_aarch64_get_selects_downloads_verifies_and_loads_the_aarch64_tvm_ffi_variant(hub, tmp_path):
    kernelhub = aarch64_program("kernelhub")
    expected = one_variant(aarch64_build(), "tvm-ffi*-cpu-aarch64-linux").name
    start = time.monotonic()
    r = run_aarch64(kernelhub, "get", REPO, "--version", "1", "--json", env=guest_env(hub, tmp_path))
    cold = time.monotonic() - start
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["framework"] == "tvm-ffi" and got["variant"] == expected
    assert got["tvm_ffi"]["found_by"] == "KERNELHUB_TVM_FFI_LIBRARY"
    assert "rms_norm_cpu" in [f["name"] for f in got["functions"]]
    assert Path(got["path"]).is_relative_to(tmp_path / "hf")
    decisions = {d["variant"]: d for d in got["decisions"]}
    # The torch op builds need LibTorch, which the torch-free kernelhub does not have (no kernelhub-get
    # beside it here): out first for that; the x86_64 tvm-ffi build for its cpu.
    for name in hub.variants:
        if name.startswith("torch"):
            assert decisions[name]["code"] == "no_libtorch", decisions[name]
        elif name.endswith("-x86_64-linux"):
            assert not decisions[name]["accepted"] and "x86_64" in decisions[name]["reason"], decisions[name]
    assert [n for n in hub.variants if n.startswith("tvm-ffi") and n.endswith("-x86_64-linux")]
    # Warm: everything from the cache, verified by its stamp.
    start = time.monotonic()
    again = run_aarch64(kernelhub, "get", REPO, "--version", "1", "--json", env=guest_env(hub, tmp_path))
    warm = time.monotonic() - start
    assert again.returncode == 0, again.stderr
    print(f"aarch64 kernelhub get under qemu: cold {cold:.2f} s, warm {warm:.2f} s")


def test_aarch64_example_calls_rms_norm_against_its_own_reference(hub, tmp_path):
    example = aarch64_program("tvm_ffi_rms_norm")
    start = time.monotonic()
    r = run_aarch64(example, REPO, env=guest_env(hub, tmp_path))
    elapsed = time.monotonic() - start
    assert r.returncode == 0, r.stdout + r.stderr
    assert "tvm-ffi" in r.stdout and "-aarch64-linux" in r.stdout, r.stdout
    assert "rms_norm" in r.stdout and "max error" in r.stdout, r.stdout
    print(f"aarch64 tvm_ffi_rms_norm under qemu: {elapsed:.2f} s\n{r.stdout}")


def test_aarch64_torch_op_variant_through_aarch64_libtorch(hub, tmp_path):
    """kernelhub-get for aarch64 (scripts/aarch64.sh torch) with the aarch64 LibTorch: the torch op
    build, its rms_norm op registered. Skipped where that build was not made (not in make test)."""
    kernelhub_get = aarch64_program("kernelhub-get")
    lib_path = f"{prefix() / 'torch' / 'lib'}:{prefix() / 'nvidia' / 'cu13' / 'lib'}"
    start = time.monotonic()
    r = run_aarch64(kernelhub_get, "get", REPO, "--version", "1", "--json",
                    env=guest_env(hub, tmp_path, LD_LIBRARY_PATH=lib_path))
    elapsed = time.monotonic() - start
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["variant"] == one_variant(aarch64_build(), "torch*-cpu-aarch64-linux").name
    assert "rms_norm" in [op["name"] for op in got["ops"]]
    print(f"aarch64 kernelhub-get (LibTorch) under qemu: {elapsed:.2f} s")


def test_the_gpu_fit_reads_an_aarch64_cuda_library(tmp_path):
    """With the reference kernels' CUDA variant for aarch64 (scripts/aarch64.sh cuda: sm_90 and sm_100
    SASS), the aarch64 `kernelhub variants` fits it to the GPUs from its own .nv_fatbin: a GH200's
    (9.0) runs it, an A100's (8.0) does not. Skipped where that variant was not built."""
    kernelhub = aarch64_program("kernelhub")
    cuda = one_variant(aarch64_build(), "torch*-cu*-aarch64-linux")
    kernel = local_kernel(tmp_path, cuda, cuda.name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KERNELHUB_")}
    env.update(KERNELHUB_TORCH="2.15.0+cu130", KERNELHUB_CXX11_ABI="1", KERNELHUB_PYTHON="3.11",
               KERNELHUB_CUDA_DRIVER="13.0")
    for gpus, fits in (("9.0", True), ("8.0", False)):
        r = run_aarch64(kernelhub, "variants", str(kernel), "--json", env=dict(env, KERNELHUB_GPUS=gpus))
        assert r.returncode == (0 if fits else 4), r.stdout + r.stderr
        (decision,) = [d for d in json.loads(r.stdout)["decisions"] if d["variant"] == cuda.name]
        assert decision["accepted"] == fits, decision
        assert "sm_90" in decision["reason"] or "sm_100" in decision["reason"], decision


# ---- bad input ----------------------------------------------------------------------------------


def local_kernel(tmp_path: Path, source: Path, name: str, strip_digest: bool = False) -> Path:
    """A LOCAL_KERNELS directory holding a copy of `source` under the folder name `name`."""
    target = tmp_path / "kernel" / "build" / name
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    if strip_digest:  # so that the ELF checks, not the digest, meet the damaged library
        metadata = json.loads((target / "metadata.json").read_text())
        metadata.pop("digest", None)
        (target / "metadata.json").write_text(json.dumps(metadata))
    return tmp_path / "kernel"


def library_of(variant: Path) -> Path:
    (library,) = [p for p in variant.rglob("*.so")]
    return library


def local_get_aarch64(tmp_path: Path, kernel: Path) -> subprocess.CompletedProcess:
    env = without_torch(dict(os.environ))
    env.update(LOCAL_KERNELS=f"{REPO}={kernel}", KERNELHUB_TVM_FFI_LIBRARY=str(runtime_library()),
               KERNELHUB_STATE_DIR=str(tmp_path / "state"))
    return run_aarch64(aarch64_program("kernelhub"), "get", REPO, "--version", "1", "--json", env=env)


def error_of(r: subprocess.CompletedProcess) -> dict:
    assert r.returncode != 0, r.stdout
    return json.loads(r.stdout)["error"] if r.stdout.strip() else {"message": r.stderr}


def test_an_x86_64_library_in_a_folder_named_aarch64_is_refused_on_aarch64(tmp_path):
    x86 = one_variant(BUILD, "tvm-ffi*-cpu-x86_64-linux")
    name = x86.name.replace("-x86_64-linux", "-aarch64-linux")
    r = local_get_aarch64(tmp_path, local_kernel(tmp_path, x86, name))
    error = error_of(r)
    assert error["code"] == "incompatible_binary", error
    assert f"is built for x86_64, but its variant `{name}` is named for aarch64 (this machine is aarch64)" in \
        error["message"]


def test_an_aarch64_library_in_a_folder_named_x86_64_is_refused_on_x86_64(tmp_path):
    arm = one_variant(aarch64_build(), "tvm-ffi*-cpu-aarch64-linux")
    name = arm.name.replace("-aarch64-linux", "-x86_64-linux")
    import tvm_ffi.libinfo

    env = without_torch(dict(os.environ))
    env.update(LOCAL_KERNELS=f"{REPO}={local_kernel(tmp_path, arm, name)}",
               KERNELHUB_TVM_FFI_LIBRARY=tvm_ffi.libinfo.find_libtvm_ffi(), KERNELHUB_STATE_DIR=str(tmp_path / "s"))
    r = subprocess.run([str(KERNELHUB), "get", REPO, "--version", "1", "--json"], capture_output=True, text=True,
                       env=env, timeout=120)
    error = error_of(r)
    assert error["code"] == "incompatible_binary", error
    assert f"is built for aarch64, but its variant `{name}` is named for x86_64 (this machine is x86_64)" in \
        error["message"]


def test_a_repo_with_variants_for_the_other_machine_only_names_the_closest_miss(tmp_path):
    x86 = one_variant(BUILD, "tvm-ffi*-cpu-x86_64-linux")
    r = local_get_aarch64(tmp_path, local_kernel(tmp_path, x86, x86.name))
    assert r.returncode == 4, r.stdout + r.stderr  # no variant runs here
    error = error_of(r)
    assert error["code"] == "no_compatible_variant", error
    assert "x86_64" in error["message"] and "aarch64" in error["message"], error["message"]


def test_an_aarch64_library_cut_short_is_a_corrupt_file_before_any_load(tmp_path):
    arm = one_variant(aarch64_build(), "tvm-ffi*-cpu-aarch64-linux")
    kernel = local_kernel(tmp_path, arm, arm.name, strip_digest=True)
    library = library_of(kernel / "build" / arm.name)
    library.write_bytes(library.read_bytes()[: library.stat().st_size // 2])
    error = error_of(local_get_aarch64(tmp_path, kernel))
    assert error["code"] == "corrupt_file", error
    assert "cut short" in error["message"] and library.name in error["message"], error["message"]


def test_from_python_an_aarch64_torch_library_in_an_x86_64_folder_is_refused_before_import(tmp_path):
    """The shim (x86_64, the build's kernelhub package) refuses it with IncompatibleBinaryError, an
    ImportError, before Python's import would dlopen it."""
    arm = one_variant(aarch64_build(), "torch*-cpu-aarch64-linux")
    name = arm.name.replace("-aarch64-linux", "-x86_64-linux")
    kernel = local_kernel(tmp_path, arm, name)
    package = BUILD / "python"
    if not (package / "kernelhub").exists():
        pytest.skip(f"{package / 'kernelhub'} is not built")
    script = (
        "import kernelhub, sys\n"
        "try:\n"
        f"    kernelhub.get_kernel({REPO!r}, version=1)\n"
        "except kernelhub.errors.IncompatibleBinaryError as e:\n"
        "    print(type(e).__name__, isinstance(e, ImportError), e)\n"
        "    sys.exit(0)\n"
        "sys.exit('loaded')\n")
    env = dict(os.environ, LOCAL_KERNELS=f"{REPO}={kernel}", PYTHONPATH=str(package),
               KERNELHUB_STATE_DIR=str(tmp_path / "state"))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("IncompatibleBinaryError True "), r.stdout
    assert f"is built for aarch64, but its variant `{name}` is named for x86_64" in r.stdout
