"""Our C++ client and the real `huggingface_hub` share one cache, against `kernelhub serve`.

- What `kernelhub download` fetched, huggingface_hub finds with local_files_only=True.
- What huggingface_hub downloaded, `kernelhub download` uses with HF_HUB_OFFLINE=1, and online
  with a pinned commit, with zero requests to the server (counted in its request log).
- 16 `kernelhub download` processes plus one Python hf_hub_download into one cold cache at the
  same time: all succeed, each blob is fetched from storage once, the cache re-hashes clean.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_DISABLE_XET", "1")

pytest.importorskip("huggingface_hub")
from huggingface_hub import HfApi, constants  # noqa: E402

constants.HF_HUB_DISABLE_XET = True

from conftest import KERNELHUB_BIN  # noqa: E402
from kernels_releases import RELEASES, kernels_env  # noqa: E402

REPO = "acme/interop-kernel"
BIG = os.urandom(12 * 1024 * 1024)  # LFS (> 10 MB), through the storage host


@pytest.fixture(scope="module")
def published(hub_server, tmp_path_factory):
    root = tmp_path_factory.mktemp("interop-upload")
    files = {
        "build/torch-cpu/__init__.py": b"from ._ops import ops\n",
        "build/torch-cpu/_ops.py": b"ops = 'cpu'\n",
        "build/torch-cpu/_interop.abi3.so": BIG,
        "build/torch-cuda/__init__.py": b"ops = 'cuda'\n",
    }
    for rel, content in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(content)
    api = HfApi(endpoint=hub_server.url, token=hub_server.write_token)
    api.create_repo(REPO, repo_type="kernel", exist_ok=True)
    api.upload_folder(folder_path=str(root), repo_id=REPO, repo_type="kernel", commit_message="interop")
    api.create_branch(REPO, branch="v1", repo_type="kernel", exist_ok=True)
    commit = api.list_repo_refs(REPO, repo_type="kernel").branches[0].target_commit
    return {"commit": commit, "files": files}


def _env(server, cache: Path, offline: bool = False) -> dict:
    env = server.client_env(cache)
    env["HF_HOME"] = str(cache.parent / "hf-home")
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return env


def _ours(server, cache: Path, *args: str, offline: bool = False) -> dict:
    result = subprocess.run([str(KERNELHUB_BIN), "download", REPO, *args, "--json"], env=_env(server, cache, offline),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def _python(server, cache: Path, code: str, offline: bool = False) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=_env(server, cache, offline),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _requests(server) -> int:
    return len([line for line in server.log().splitlines() if line.strip()])


def _check_cache_clean(cache: Path) -> None:
    for path in cache.rglob("*"):
        assert not path.name.endswith((".incomplete", ".tmp")), path
        if path.parent.name == "blobs" and path.is_file():
            data = path.read_bytes()
            if len(path.name) == 64:
                assert hashlib.sha256(data).hexdigest() == path.name, path
            else:
                header = f"blob {len(data)}\0".encode()
                assert hashlib.sha1(header + data).hexdigest() == path.name, path


def test_python_finds_what_we_downloaded(hub_server, published, tmp_path):
    cache = tmp_path / "cache"
    out = _ours(hub_server, cache, "--variant", "torch-cpu")
    assert out["commit"] == published["commit"]
    assert sorted(out["files"]) == sorted(f for f in published["files"] if f.startswith("build/torch-cpu/"))
    assert (cache / "CACHEDIR.TAG").exists()
    assert (cache / "kernels--acme--interop-kernel" / "refs" / "main").read_text() == published["commit"]
    printed = _python(hub_server, cache, f"""
        from huggingface_hub import hf_hub_download, snapshot_download
        p = hf_hub_download({REPO!r}, "build/torch-cpu/_interop.abi3.so", repo_type="kernel", local_files_only=True)
        s = snapshot_download({REPO!r}, repo_type="kernel", allow_patterns=["build/torch-cpu/*"], local_files_only=True)
        print(p); print(s)
    """, offline=True)
    file_path, snapshot = printed.split()
    assert Path(file_path).read_bytes() == BIG
    assert Path(snapshot) / "build" / "torch-cpu" == Path(out["path"])
    _check_cache_clean(cache)


def test_we_use_what_python_downloaded_without_requests(hub_server, published, tmp_path):
    cache = tmp_path / "cache"
    _python(hub_server, cache, f"""
        from huggingface_hub import snapshot_download
        print(snapshot_download({REPO!r}, repo_type="kernel", allow_patterns=["build/torch-cpu/*"]))
    """)
    before = _requests(hub_server)
    out = _ours(hub_server, cache, "--variant", "torch-cpu", offline=True)
    assert out["requests"] == 0 and out["commit"] == published["commit"]
    pinned = _ours(hub_server, cache, "--revision", published["commit"], "--variant", "torch-cpu")
    assert pinned["requests"] == 0
    assert _requests(hub_server) == before, hub_server.log()[-2000:]
    assert (Path(out["path"]) / "_interop.abi3.so").read_bytes() == BIG


def test_offline_miss_lists_the_cache(hub_server, published, tmp_path):
    result = subprocess.run([str(KERNELHUB_BIN), "download", REPO, "--variant", "torch-cpu", "--json"],
                            env=_env(hub_server, tmp_path / "empty", offline=True), capture_output=True, text=True)
    assert result.returncode == 6  # offline and not cached (docs/CLI.md)
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "offline_miss"
    assert "holds nothing for this repo" in error["message"]


def test_not_found_says_what_in_json(hub_server, published, tmp_path):
    # A script tells a typo in the repo id from a missing tag by the typed field, not the prose.
    env = _env(hub_server, tmp_path / "cache")
    for args, missing in ((["acme/no-such-kernel"], "repo"), ([REPO, "--revision", "no-such-branch"], "revision")):
        result = subprocess.run([str(KERNELHUB_BIN), "download", *args, "--json"], env=env, capture_output=True,
                                text=True)
        assert result.returncode == 3, result.stderr
        error = json.loads(result.stdout)["error"]
        assert error["code"] == "not_found" and error["missing"] == missing, error


def test_sixteen_of_ours_and_python_share_a_cold_cache(hub_server, published, tmp_path):
    cache = tmp_path / "cache"
    env = _env(hub_server, cache)
    big_sha = hashlib.sha256(BIG).hexdigest()
    before = hub_server.log()
    ours = [subprocess.Popen([str(KERNELHUB_BIN), "download", REPO, "--variant", "torch-cpu", "--json"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(16)]
    python = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        from huggingface_hub import hf_hub_download
        print(hf_hub_download({REPO!r}, "build/torch-cpu/_interop.abi3.so", repo_type="kernel"))
    """)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for process in ours + [python]:
        stdout, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stdout + stderr
    new_lines = hub_server.log()[len(before):].splitlines()
    storage_gets = [line for line in new_lines if line.startswith("GET") and big_sha in line]
    assert len(storage_gets) == 1, storage_gets
    blob = cache / "kernels--acme--interop-kernel" / "blobs" / big_sha
    assert blob.read_bytes() == BIG
    _check_cache_clean(cache)


def _cpu_variant_dir() -> Path | None:
    explicit = os.environ.get("KERNELHUB_TEST_VARIANT_DIR")
    if explicit:
        return Path(explicit) if Path(explicit).is_dir() else None
    found = sorted(KERNELHUB_BIN.parent.parent.glob("kernels/build/torch*-cpu-*"))
    return found[-1] if found else None


@pytest.mark.parametrize("release", RELEASES)
def test_kernels_package_loads_offline_what_we_downloaded(kernelhub_serve, tmp_path, release):
    pytest.importorskip("kernels")
    pytest.importorskip("torch")
    variant = _cpu_variant_dir()
    if variant is None:
        pytest.skip("no CPU kernel variant: build the reference kernels or set KERNELHUB_TEST_VARIANT_DIR")
    server = kernelhub_serve()
    api = HfApi(endpoint=server.url, token=server.write_token)
    repo = "acme/interop-reference"
    api.create_repo(repo, repo_type="kernel")
    api.upload_file(path_or_fileobj=b"# reference kernels\n", path_in_repo="README.md", repo_id=repo, repo_type="kernel")
    api.create_branch(repo, branch="v1", repo_type="kernel")
    api.upload_folder(folder_path=str(variant), path_in_repo=f"build/{variant.name}", repo_id=repo,
                      repo_type="kernel", revision="v1", commit_message=f"publish {variant.name}")
    cache = tmp_path / "cache"
    env = _env(server, cache)
    # Without --variant the CLI picks this machine's variant, as `kernels` would.
    result = subprocess.run([str(KERNELHUB_BIN), "download", repo, "--version", "1", "--json"], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["variants"] == [variant.name]
    # kernels 0.17.2 loads offline through snapshot_download(local_files_only=True) without
    # patterns, which needs every file the cached tree lists (its own one-variant download is not
    # loadable offline either), hence --all-files.
    result = subprocess.run([str(KERNELHUB_BIN), "download", repo, "--version", "1", "--all-files", "--json"],
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    commit = json.loads(result.stdout)["commit"]
    before = len(server.log().splitlines())
    script = textwrap.dedent(f"""
        import torch, kernels
        kernel = kernels.get_kernel({repo!r}, version=1, backend="cpu", trust_remote_code=True)
        x = torch.randn(8, 64)
        w = torch.rand(64) + 0.5
        y = kernel.rms_norm(x, w, 1e-6)
        ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
        torch.testing.assert_close(y, ref, atol=1e-5, rtol=1e-5)
        print("ok")
    """)
    result = subprocess.run([sys.executable, "-c", script], env=kernels_env(dict(env, HF_HUB_OFFLINE="1"), release),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok" in result.stdout
    assert len(server.log().splitlines()) == before
