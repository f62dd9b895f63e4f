"""Lock files: `kernelhub lock`, locked loads, and the kernels package on both sides.

The variant hash is checked against an independent implementation of the kernels <= 0.16
algorithm over huggingface_hub's own listing, and the lock files cross between the two packages:
kernels (0.19.1, and 0.17.2 which users of older releases run) parses and loads what `kernelhub lock`
writes, and we load what `kernels lock` writes.
"""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from huggingface_hub import HfApi
from huggingface_hub.hf_api import RepoFile

from kernels_releases import CURRENT, RELEASES, kernels_cli, kernels_env
from test_get_kernel_hub import KERNELHUB, cpu_variant_dir, publish, requests_in_log

REPO = "acme/reference-kernels"


@pytest.fixture
def hub(kernelhub_serve):
    server = kernelhub_serve()
    server.commit = publish(server, REPO)
    return server


def run(server, cache: Path, *args, offline=False, cwd=None):
    env = dict(os.environ, HF_ENDPOINT=server.url, HF_HUB_CACHE=str(cache), HF_HUB_DISABLE_XET="1")
    for name in ("HF_TOKEN", "LOCAL_KERNELS", "HF_HUB_OFFLINE", "KERNELS_CACHE"):
        env.pop(name, None)
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return subprocess.run([str(KERNELHUB), *args], capture_output=True, text=True, env=env, timeout=120, cwd=cwd)


def project(tmp_path: Path, table: str = "tool.kernels.dependencies", file: str = "pyproject.toml") -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / file).write_text(f'[project]\nname = "demo"\ndescription = """\n[not.a.table]\n"""\n\n'
                             f'[{table}]\n"{REPO}" = 1  # the reference kernels\n')
    return root


def expected_hashes(server, commit: str) -> dict:
    """kernels <= 0.16 `get_kernel_locks`, over huggingface_hub's listing."""
    api = HfApi(endpoint=server.url)
    files: dict = {}
    for entry in api.list_repo_tree(REPO, repo_type="kernel", revision=commit, recursive=True):
        if not isinstance(entry, RepoFile) or not entry.path.startswith("build/torch"):
            continue
        if entry.path.endswith(".pyc") or "__pycache__" in entry.path.split("/"):
            continue
        parts = entry.path.split("/")
        digest = entry.lfs.sha256 if entry.lfs is not None else entry.blob_id
        files.setdefault(parts[1], []).append(("/".join(parts[2:]).encode(), digest))
    out = {}
    for variant, entries in files.items():
        m = hashlib.sha256()
        for name, digest in sorted(entries):
            m.update(name)
            m.update(bytes.fromhex(digest))
        out[variant] = "sha256-" + m.hexdigest()
    return out


def test_lock_writes_kernels_format_and_hashes_that_match_the_reference_algorithm(hub, tmp_path):
    root = project(tmp_path)
    r = run(hub, tmp_path / "cache", "lock", str(root), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["written"] == [str(root / "kernels.lock"), str(root / "kernelhub.lock")]

    lock = json.loads((root / "kernels.lock").read_text())
    assert lock == [{"dependency": {"repo-id": REPO, "version": 1}, "lock": {"commit": hub.commit}}]
    from kernels._rust import KernelLocks  # the kernels package's own strict parser

    parsed = KernelLocks.from_json((root / "kernels.lock").read_text())
    assert [str(lock.commit) for lock in parsed.values()] == [hub.commit]  # an Oid since kernels 0.18

    hashes = json.loads((root / "kernelhub.lock").read_text())
    assert hashes[0]["repo_id"] == REPO and hashes[0]["sha"] == hub.commit
    want = expected_hashes(hub, hub.commit)
    assert {v: h["hash"] for v, h in hashes[0]["variants"].items()} == want
    assert all(h["hash_type"] == "git_lfs_concat" for h in hashes[0]["variants"].values())


def test_locked_load_checks_the_hash_and_is_request_free_when_cached(hub, tmp_path):
    root = project(tmp_path, table="dependencies", file="kernels.toml")  # the C++ project form
    cache = tmp_path / "cache"
    # Locking reads each variant's metadata.json (for kernel-depends): in a cache of its own, so
    # that the load below is a cold one.
    assert run(hub, tmp_path / "lock-cache", "lock", str(root)).returncode == 0
    lockfile = str(root / "kernels.lock")
    r = run(hub, cache, "get", REPO, "--lockfile", lockfile, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["revision"] == hub.commit
    # The lock check and metadata.json's digest read the same files, and this cold load hashed
    # each as it downloaded: nothing is read again (never the op library twice).
    files = [f for f in cpu_variant_dir().rglob("*") if f.is_file() and "__pycache__" not in f.parts]
    assert json.loads(r.stdout)["bytes_hashed"] == 0
    assert json.loads(r.stdout)["bytes_read"] < sum(f.stat().st_size for f in files) // 4

    before = requests_in_log(hub)
    r = run(hub, cache, "get", REPO, "--lockfile", lockfile, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["requests"] == 0
    assert requests_in_log(hub) == before, "a cached locked load made a request"


def test_a_lock_hash_that_differs_refuses_the_load(hub, tmp_path):
    root = project(tmp_path)
    cache = tmp_path / "cache"
    assert run(hub, cache, "lock", str(root)).returncode == 0
    hashes = json.loads((root / "kernelhub.lock").read_text())
    variant = cpu_variant_dir().name
    hashes[0]["variants"][variant]["hash"] = "sha256-" + "0" * 64
    (root / "kernelhub.lock").write_text(json.dumps(hashes))
    r = run(hub, cache, "get", REPO, "--lockfile", str(root / "kernels.lock"))
    assert r.returncode == 9  # integrity (docs/CLI.md)
    assert "the lock file says sha256-" + "0" * 64 in r.stderr, r.stderr


def test_a_changed_file_in_the_cache_refuses_the_locked_load(hub, tmp_path):
    root = project(tmp_path)
    cache = tmp_path / "cache"
    assert run(hub, cache, "lock", str(root)).returncode == 0
    r = run(hub, cache, "get", REPO, "--lockfile", str(root / "kernels.lock"), "--json")
    assert r.returncode == 0, r.stderr
    library = next(Path(json.loads(r.stdout)["path"]).glob("*.so")).resolve()  # the blob
    data = bytearray(library.read_bytes())
    data[len(data) // 2] ^= 0x01
    library.write_bytes(bytes(data))
    r = run(hub, cache, "get", REPO, "--lockfile", str(root / "kernels.lock"))
    assert r.returncode == 9
    # The cache is what changed, before the lock is compared: said by the blob's name.
    assert "changed in the cache" in r.stderr and library.name in r.stderr, r.stderr


def test_stale_hash_file_and_unlocked_repo_and_revision_conflict_are_clear_errors(hub, tmp_path):
    root = project(tmp_path)
    cache = tmp_path / "cache"
    assert run(hub, cache, "lock", str(root)).returncode == 0
    lockfile = str(root / "kernels.lock")

    r = run(hub, cache, "get", "acme/other-kernel", "--lockfile", lockfile)
    assert r.returncode == 3 and "is not locked in" in r.stderr and "kernelhub lock" in r.stderr, r.stderr

    r = run(hub, cache, "get", REPO, "--lockfile", lockfile, "--version", "1")
    assert r.returncode == 2 and "do not also give a revision or version" in r.stderr, r.stderr

    hashes = json.loads((root / "kernelhub.lock").read_text())
    hashes[0]["sha"] = "f" * 40
    (root / "kernelhub.lock").write_text(json.dumps(hashes))
    r = run(hub, cache, "get", REPO, "--lockfile", lockfile)
    assert r.returncode == 9 and "written apart" in r.stderr, r.stderr


def test_legacy_format_carries_its_hashes(hub, tmp_path):
    root = project(tmp_path)
    cache = tmp_path / "cache"
    r = run(hub, cache, "lock", str(root), "--format", "legacy")
    assert r.returncode == 0, r.stderr
    assert not (root / "kernelhub.lock").exists()
    # The format of kernels <= 0.16, which kernels 0.17 and later refuse (verdicts.json says why we
    # read it): said where it is written.
    assert "which kernels 0.17 and later refuse" in r.stderr, r.stderr
    from kernels._rust import KernelLocks

    with pytest.raises(ValueError, match="unknown field `repo_id`"):
        KernelLocks.from_json((root / "kernels.lock").read_text())
    lock = json.loads((root / "kernels.lock").read_text())
    assert lock[0]["sha"] == hub.commit
    assert {v: h["hash"] for v, h in lock[0]["variants"].items()} == expected_hashes(hub, hub.commit)
    r = run(hub, cache, "get", REPO, "--lockfile", str(root / "kernels.lock"), "--json")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("release", RELEASES)
def test_kernels_package_loads_with_our_lock_and_we_load_with_its_lock(hub, tmp_path, release):
    cache = tmp_path / "cache"
    ours = project(tmp_path)
    assert run(hub, cache, "lock", str(ours)).returncode == 0
    assert run(hub, cache, "download", REPO, "--version", "1", "--all-files", "--quiet").returncode == 0

    # kernels' load_kernel: locked, from the cache only, with our kernels.lock.
    script = (
        "import sys, torch\n"
        "from pathlib import Path\n"
        "from kernels import load_kernel\n"
        f"k = load_kernel({REPO!r}, lockfile=Path(sys.argv[1]), backend='cpu')\n"
        "x = torch.randn(3, 8); w = torch.ones(8)\n"
        "out = k.rms_norm(x, w, 1e-6)\n"
        "ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)\n"
        "assert torch.allclose(out, ref, atol=1e-5), (out, ref)\n"
        "print('ok')\n"
    )
    env = kernels_env(hub.client_env(cache), release)
    env["HF_HUB_OFFLINE"] = "1"
    r = subprocess.run([sys.executable, "-c", script, str(ours / "kernels.lock")], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr

    # `kernels lock` (the real CLI) writes a lock without hashes; we load it by its commit. (0.17.2's
    # CLI starts only with sigstore installed, which its oracle folder lacks; 0.17.2 and 0.19.1 write
    # the same lock file.)
    if release != CURRENT:
        return
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "pyproject.toml").write_text(f'[tool.kernels.dependencies]\n"{REPO}" = 1\n')
    r = subprocess.run([*kernels_cli(release), "lock", str(theirs)], capture_output=True, text=True,
                       env=kernels_env(hub.client_env(cache), release), timeout=300)
    assert r.returncode == 0, r.stderr
    r = run(hub, cache, "get", REPO, "--lockfile", str(theirs / "kernels.lock"), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["revision"] == hub.commit


def test_lock_reports_bad_dependency_lists_with_their_line(hub, tmp_path):
    root = tmp_path / "bad"
    root.mkdir()
    (root / "pyproject.toml").write_text('[tool.kernels.dependencies]\n"acme/x" = 1\n"acme/y" = "1.2"\nnot-quoted = 3\n')
    r = run(hub, tmp_path / "cache", "lock", str(root))
    assert r.returncode == 2
    assert "line 4" in r.stderr and "quoted repo id" in r.stderr, r.stderr
    assert not (root / "kernels.lock").exists()

    empty = tmp_path / "empty"
    empty.mkdir()
    r = run(hub, tmp_path / "cache", "lock", str(empty))
    assert r.returncode == 3 and "kernels.toml" in r.stderr, r.stderr
