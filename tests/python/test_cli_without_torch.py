"""A machine with no torch: no python3 on PATH, no VIRTUAL_ENV, no KERNELHUB_TORCH. There the torch-free
`kernelhub` selects among the builds it loads without torch (tvm-ffi builds, for the TVM-FFI runtime
it was built with: its RUNPATH) and says so, in every command that selects: a tvm-ffi-only repo is
listed, described, downloaded, locked (the tvm-ffi build's hash too) and loaded with its lock; a
mixed repo's lock holds both kinds' hashes, so that the torch-free locked load checks its build's.
And where no runtime is to be found, the error says where it looked and what to set."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, HfApi
from huggingface_hub.hf_api import RepoFile

from conftest import KERNELHUB_BIN
from test_cli_tvm_ffi import variant

REPO = "acme/tvm-ffi-kernels"


def publish(server, *variants: Path) -> str:
    """`variants` as branch v1 of REPO; returns the commit."""
    api = HfApi(endpoint=server.url, token=server.write_token)
    api.create_repo(REPO, repo_type="kernel", exist_ok=True)
    api.create_branch(REPO, repo_type="kernel", branch="v1", exist_ok=True)
    ops = [CommitOperationAdd(path_in_repo=f"build/{v.name}/{f.relative_to(v).as_posix()}", path_or_fileobj=str(f))
           for v in variants for f in sorted(v.rglob("*")) if f.is_file() and "__pycache__" not in f.parts]
    return api.create_commit(REPO, repo_type="kernel", revision="v1", operations=ops, commit_message="publish").oid


def no_torch_env(server, tmp_path: Path) -> dict:
    """Talking to `server`, with no Python (so no torch) anywhere to be found."""
    env = {k: v for k, v in server.client_env(tmp_path / "cache").items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "KERNELHUB_TORCH", "KERNELHUB_TVM_FFI_LIBRARY", "LOCAL_KERNELS",
                        "HF_HUB_OFFLINE", "LD_PRELOAD")}
    env.update(PATH=str(tmp_path / "no-python"), HOME=str(tmp_path / "home"), HF_HOME=str(tmp_path / "hf-home"),
               KERNELHUB_BACKEND="cpu", KERNELHUB_TRUSTED="acme")
    return env


def run(*args: str, env: dict) -> subprocess.CompletedProcess:
    if not KERNELHUB_BIN.exists():
        pytest.skip(f"{KERNELHUB_BIN} is not built")
    return subprocess.run([str(KERNELHUB_BIN), *args], env=env, capture_output=True, text=True, timeout=300)


def lock_hashes(server, commit: str) -> dict:
    """kernels <= 0.16's git_lfs_concat hash of every variant under build/, over huggingface_hub's listing."""
    files: dict = {}
    for entry in HfApi(endpoint=server.url).list_repo_tree(REPO, repo_type="kernel", revision=commit, recursive=True):
        parts = entry.path.split("/")
        if not isinstance(entry, RepoFile) or parts[0] != "build" or len(parts) < 3 or "__pycache__" in parts:
            continue
        files.setdefault(parts[1], []).append(("/".join(parts[2:]).encode(), entry.lfs.sha256 if entry.lfs else entry.blob_id))
    out = {}
    for name, entries in files.items():
        digest = hashlib.sha256()
        for path, blob in sorted(entries):
            digest.update(path + bytes.fromhex(blob))
        out[name] = "sha256-" + digest.hexdigest()
    return out


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "kernels.toml").write_text(f'[dependencies]\n"{REPO}" = 1\n')
    return root


NOTE = "selecting the builds that load without torch, tvm-ffi builds, for the TVM-FFI 0."


def test_a_tvm_ffi_only_repo_is_listed_described_downloaded_locked_and_loaded_with_its_lock(kernelhub_serve, tmp_path):
    tvm = variant("tvm-ffi*-cpu-*")
    server = kernelhub_serve()
    commit = publish(server, tvm)
    env = no_torch_env(server, tmp_path)

    listed = run("variants", REPO, "--json", env=env)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert json.loads(listed.stdout)["revisions"][0]["chosen"] == tvm.name
    assert NOTE in listed.stderr and "was built with" in listed.stderr, listed.stderr
    assert "no torch here (" in listed.stderr and "Give --torch SPEC to select for a torch" in listed.stderr

    info = run("info", REPO, "--json", env=env)
    assert info.returncode == 0 and json.loads(info.stdout)["variant"] == tvm.name, info.stdout + info.stderr
    described = run("describe-api", REPO, "--json", env=env)
    assert described.returncode == 0, described.stdout + described.stderr
    api = json.loads(described.stdout)
    assert api["variant"] == tvm.name and "rms_norm" in [f["name"] for f in api["functions"]], api

    downloaded = run("download", REPO, "--version", "1", "--json", env=env)
    assert downloaded.returncode == 0, downloaded.stdout + downloaded.stderr
    assert json.loads(downloaded.stdout)["variants"] == [tvm.name] and NOTE in downloaded.stderr

    root = project(tmp_path)
    locked = run("lock", str(root), "--json", env=env)
    assert locked.returncode == 0, locked.stdout + locked.stderr
    hashes = json.loads((root / "kernelhub.lock").read_text())[0]["variants"]
    assert {name: h["hash"] for name, h in hashes.items()} == lock_hashes(server, commit) and tvm.name in hashes

    got = run("get", REPO, "--lockfile", str(root / "kernels.lock"), "--json", env=env)
    assert got.returncode == 0, got.stdout + got.stderr
    loaded = json.loads(got.stdout)
    assert (loaded["framework"], loaded["variant"], loaded["revision"]) == ("tvm-ffi", tvm.name, commit)
    assert "was built with" in loaded["tvm_ffi"]["found_by"], loaded["tvm_ffi"]

    # The lock's hash of the tvm-ffi build is checked on that load.
    tampered = json.loads((root / "kernelhub.lock").read_text())
    tampered[0]["variants"][tvm.name]["hash"] = "sha256-" + "0" * 64
    (root / "kernelhub.lock").write_text(json.dumps(tampered))
    refused = run("get", REPO, "--lockfile", str(root / "kernels.lock"), env=env)
    assert refused.returncode == 9 and "the lock file says sha256-" + "0" * 64 in refused.stderr, refused.stderr


def test_a_mixed_repos_lock_holds_both_kinds_and_a_torch_free_get_loads_with_it(kernelhub_serve, tmp_path):
    tvm, torch_build = variant("tvm-ffi*-cpu-*"), variant("torch*-cpu-*")
    server = kernelhub_serve()
    commit = publish(server, torch_build, tvm)
    env = no_torch_env(server, tmp_path)
    root = project(tmp_path)
    assert run("lock", str(root), env=env).returncode == 0
    hashes = json.loads((root / "kernelhub.lock").read_text())[0]["variants"]
    assert set(hashes) == {tvm.name, torch_build.name}
    got = run("get", REPO, "--lockfile", str(root / "kernels.lock"), "--json", env=env)
    assert got.returncode == 0, got.stdout + got.stderr
    assert (json.loads(got.stdout)["variant"], json.loads(got.stdout)["revision"]) == (tvm.name, commit)
    # With no torch the torch build is listed as what it needs, not chosen.
    listed = json.loads(run("variants", REPO, "--json", env=env).stdout)["revisions"][0]
    (torch_decision,) = [v for v in listed["variants"] if v["variant"] == torch_build.name]
    assert listed["chosen"] == tvm.name and torch_decision["code"] == "no_libtorch"


def test_a_runtime_that_is_not_there_says_where_it_looked_and_what_to_set(kernelhub_serve, tmp_path):
    server = kernelhub_serve()
    publish(server, variant("tvm-ffi*-cpu-*"))
    env = dict(no_torch_env(server, tmp_path), KERNELHUB_TVM_FFI_LIBRARY=str(tmp_path / "gone" / "libtvm_ffi.so"))
    got = run("get", REPO, "--version", "1", env=env)
    assert got.returncode == 3, got.stdout + got.stderr
    assert f"KERNELHUB_TVM_FFI_LIBRARY=`{tmp_path / 'gone' / 'libtvm_ffi.so'}` names no file" in got.stderr
    assert "which kernelhub loads with a TVM-FFI runtime" in got.stderr
    assert "pip install apache-tvm-ffi" in got.stderr and "tvm_ffi.libinfo.find_libtvm_ffi()" in got.stderr
    assert "kernelhub built with the TVM-FFI loader" not in got.stderr, got.stderr  # it is: the runtime is missing
    listed = run("variants", REPO, env=env)
    assert listed.returncode == 4 and "there is no TVM-FFI runtime to load them with" in listed.stderr, listed.stderr


def test_a_machine_described_whole_selects_its_cuda_build_and_loads_no_driver(tmp_path):
    """KERNELHUB_CUDA_DRIVER and KERNELHUB_GPUS given together describe the machine: the torch-free
    selection takes its backend from them and loads neither libcuda nor NVML (whose start is most of a
    warm get on a GPU machine: bench/client/TORCH_FREE_GET.md). The dynamic linker's own log says what
    the process tried to open, driver or not."""
    cpu, cuda = variant("tvm-ffi*-cpu-*"), variant("tvm-ffi*-cu*-*")
    builds = tmp_path / "build"
    builds.mkdir()
    for v in (cpu, cuda):
        (builds / v.name).symlink_to(v)
    base = {"PATH": str(tmp_path / "no-python"), "HOME": str(tmp_path / "home"), "LD_DEBUG": "files"}
    driver = cuda.name.split("-")[2].removeprefix("cu")  # cu130 -> 13.0
    described = dict(base, KERNELHUB_CUDA_DRIVER=f"{driver[:-1]}.{driver[-1]}", KERNELHUB_GPUS="9.0")

    chosen = run("variants", str(builds), "--json", env=described)
    assert chosen.returncode == 0, chosen.stderr[-2000:]
    assert json.loads(chosen.stdout)["chosen"] == cuda.name
    assert "libcuda" not in chosen.stderr and "libnvidia-ml" not in chosen.stderr

    # Not described: the driver is looked for (this machine may have none), and its answer decides.
    probed = run("variants", str(builds), "--json", env=base)
    assert probed.returncode == 0, probed.stderr[-2000:]
    assert "libcuda.so.1" in probed.stderr
