"""`kernelhub get` through a Hub (`kernelhub serve`): versions, trust, offline, integrity, requests."""

import glob
import json
import os
import subprocess
from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, HfApi, constants

constants.HF_HUB_DISABLE_XET = True  # uploads take the git-LFS path that `kernelhub serve` speaks

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
KERNELHUB = BUILD / "bin" / "kernelhub"


def cpu_variant_dir() -> Path:
    dirs = glob.glob(str(BUILD / "kernels" / "build" / "torch*-cpu-*"))
    assert len(dirs) == 1, dirs
    return Path(dirs[0])


def publish(server, repo_id: str, version: int = 1) -> str:
    api = HfApi(endpoint=server.url, token=server.write_token)
    api.create_repo(repo_id, repo_type="kernel", exist_ok=True)
    api.create_branch(repo_id, repo_type="kernel", branch=f"v{version}", exist_ok=True)
    variant = cpu_variant_dir()
    ops = [CommitOperationAdd(path_in_repo=f"build/{variant.name}/{f.relative_to(variant).as_posix()}",
                              path_or_fileobj=str(f))
           for f in sorted(variant.rglob("*")) if f.is_file() and "__pycache__" not in f.parts]
    return api.create_commit(repo_id, repo_type="kernel", revision=f"v{version}", operations=ops,
                             commit_message="publish").oid


def get(server, cache: Path, *args, offline=False):
    env = dict(os.environ, HF_ENDPOINT=server.url, HF_HUB_CACHE=str(cache), HF_HUB_DISABLE_XET="1")
    env.pop("HF_TOKEN", None)
    env.pop("LOCAL_KERNELS", None)
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return subprocess.run([str(KERNELHUB), "get", *args], capture_output=True, text=True, env=env, timeout=120)


def requests_in_log(server) -> int:
    return len([line for line in server.log().splitlines() if line.strip()])


@pytest.fixture
def hub(kernelhub_serve):
    server = kernelhub_serve()
    server.commit = publish(server, "acme/reference-kernels")
    return server


def test_get_by_version_downloads_verifies_and_loads(hub, tmp_path):
    r = get(hub, tmp_path / "cache", "acme/reference-kernels", "--version", "1", "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["revision"] == hub.commit
    assert got["variant"] == cpu_variant_dir().name
    assert "rms_norm" in [op["name"] for op in got["ops"]]
    assert got["requests"] > 0
    snapshot = tmp_path / "cache" / "kernels--acme--reference-kernels" / "snapshots" / hub.commit
    assert Path(got["path"]) == snapshot / "build" / cpu_variant_dir().name
    assert (tmp_path / "cache" / "kernels--acme--reference-kernels" / "refs" / "v1").read_text() == hub.commit


def test_warm_pinned_get_makes_no_request(hub, tmp_path):
    assert get(hub, tmp_path / "cache", "acme/reference-kernels", "--revision", hub.commit).returncode == 0
    before = requests_in_log(hub)
    r = get(hub, tmp_path / "cache", "acme/reference-kernels", "--revision", hub.commit, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["requests"] == 0
    assert requests_in_log(hub) == before


def test_missing_version_and_no_version_name_the_available_versions(hub, tmp_path):
    r = get(hub, tmp_path / "cache", "acme/reference-kernels", "--version", "7")
    assert r.returncode == 3  # not found (docs/CLI.md)
    assert "Version 7 of `acme/reference-kernels` not found, available versions: v1" in r.stderr
    r = get(hub, tmp_path / "cache", "acme/reference-kernels")
    assert r.returncode == 2  # bad usage: no version given
    assert "Give --version 1 (or --revision R)" in r.stderr  # the CLI's words (C++ callers read C++)


def test_untrusted_publisher_needs_an_opt_in(hub, tmp_path):
    publish(hub, "alice/reference-kernels")
    r = get(hub, tmp_path / "cache", "alice/reference-kernels", "--version", "1")
    assert r.returncode == 8  # not trusted
    assert "not mark as a trusted kernel publisher" in r.stderr
    blobs = tmp_path / "cache" / "kernels--alice--reference-kernels" / "blobs"
    assert not blobs.exists() or not any(blobs.iterdir())  # no file of it was downloaded
    r = get(hub, tmp_path / "cache", "alice/reference-kernels", "--version", "1", "--trust-remote-code")
    assert r.returncode == 0, r.stderr


def test_offline_uses_the_cache_and_a_miss_lists_what_is_cached(hub, tmp_path):
    cache = tmp_path / "cache"
    assert get(hub, cache, "acme/reference-kernels", "--version", "1").returncode == 0
    before = requests_in_log(hub)
    r = get(hub, cache, "acme/reference-kernels", "--version", "1", offline=True)
    assert r.returncode == 0, r.stderr
    assert requests_in_log(hub) == before
    r = get(hub, cache, "acme/other-kernel", "--version", "1", offline=True)
    assert r.returncode == 6  # offline and not cached
    assert "offline" in r.stderr.lower()


def test_a_tampered_cache_file_is_refused_before_loading(hub, tmp_path):
    cache = tmp_path / "cache"
    assert get(hub, cache, "acme/reference-kernels", "--version", "1").returncode == 0
    init = next((cache / "kernels--acme--reference-kernels" / "snapshots").glob("*/build/*/__init__.py"))
    blob = init.resolve()
    blob.chmod(0o644)
    blob.write_text(blob.read_text() + "\nimport os\n")
    r = get(hub, cache, "acme/reference-kernels", "--version", "1", offline=True)
    assert r.returncode == 9  # a file that is not what it should be
    # The cache is what changed: said, by the blob's name, with the command that repairs it.
    assert f"changed in the cache: its blob {blob.name}" in r.stderr, r.stderr
    assert "Repair it with: kernelhub download acme/reference-kernels --revision " in r.stderr


def test_download_on_several_transfer_threads_verifies_and_links_every_file(hub, tmp_path):
    """KERNELHUB_TRANSFER_THREADS splits the files across threads (the default on >= 8 cores)."""
    import hashlib

    cache = tmp_path / "cache"
    env = dict(os.environ, HF_ENDPOINT=hub.url, HF_HUB_CACHE=str(cache), HF_HUB_DISABLE_XET="1",
               KERNELHUB_TRANSFER_THREADS="3")
    env.pop("HF_TOKEN", None)
    r = subprocess.run([str(KERNELHUB), "download", "acme/reference-kernels", "--version", "1", "--all-files",
                        "--json", "--quiet"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    repo = cache / "kernels--acme--reference-kernels"
    snapshot = repo / "snapshots" / hub.commit
    variant = cpu_variant_dir()
    expected = sorted(f.relative_to(variant).as_posix() for f in variant.rglob("*")
                      if f.is_file() and "__pycache__" not in f.parts)
    linked = sorted(p.relative_to(snapshot / "build" / variant.name).as_posix()
                    for p in (snapshot / "build" / variant.name).rglob("*") if p.is_file())
    assert linked == expected and len(expected) >= 3
    for blob in (repo / "blobs").iterdir():
        data = blob.read_bytes()
        name = blob.name
        digest = (hashlib.sha256(data).hexdigest() if len(name) == 64
                  else hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest())
        assert digest == name, f"{name} does not hash to its name"
    assert not list(repo.rglob("*.incomplete"))
    assert got["commit"] == hub.commit
