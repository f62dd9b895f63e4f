"""Cluster scale, pattern 3 (docs/CLUSTER.md): compute nodes with no route to the Hub. A login node
locks the project's kernels and downloads the locked commits into a cache on a shared filesystem
(`kernelhub download --lockfile`); ranks load from it with HF_HUB_OFFLINE=1 and make no request
at all: the Hub's log does not move, and the endpoint they are given does not even exist."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cluster_support import hub  # noqa: F401  (a fixture)
from conftest import BUILD_DIR
from site_cache import Site, free_port, node_results, run_nodes

KERNELHUB = BUILD_DIR / "bin" / "kernelhub"


def login_node(hub: Site, shared: Path, *args: str) -> subprocess.CompletedProcess:
    env = hub.node_env(shared, own_torch=True)  # the login node's own torch decides the variant
    return subprocess.run([str(KERNELHUB), *args], env=env, capture_output=True, text=True, timeout=120)


def test_ranks_load_the_locked_commit_from_a_shared_cache_with_no_request(hub, tmp_path):
    s = hub()
    commit = s.publish("acme/offline")
    project = tmp_path / "project"
    project.mkdir()
    (project / "kernels.toml").write_text('[dependencies]\n"acme/offline" = 1\n')
    shared = tmp_path / "shared-fs" / "hf-cache"

    # On the login node: lock, then fill the shared cache with what the lock pins.
    locked = login_node(s, shared, "lock", str(project), "--json")
    assert locked.returncode == 0, locked.stderr
    lockfile = project / "kernels.lock"
    got = login_node(s, shared, "download", "--lockfile", str(lockfile), "--json")
    assert got.returncode == 0, got.stdout + got.stderr
    (kernel,) = json.loads(got.stdout)["kernels"]
    # The variant's files: __init__.py, _ops.py, layers.py, the library, metadata.json, symbols.json, op_schemas.json.
    assert kernel["repo"] == "acme/offline" and kernel["commit"] == commit and kernel["files"] == 7

    # On the compute nodes: offline, and an endpoint nobody listens on.
    requests_before = len(s.upstream())
    dead = f"http://127.0.0.1:{free_port()}"
    envs = [s.node_env(shared, HF_HUB_OFFLINE="1", HF_ENDPOINT=dead,
                         KERNELHUB_STATE_DIR=str(tmp_path / f"rank{i}-state")) for i in range(8)]
    ranks = node_results(run_nodes(s.node_command("acme/offline", "--lockfile", str(lockfile)), envs)[0])
    assert all(r["rc"] == 0 and r["commit"] == commit and r["requests"] == 0 for r in ranks), ranks
    # The whole C++ get_kernel (load included), offline, from the same cache.
    env = s.node_env(shared, own_torch=True, HF_HUB_OFFLINE="1", HF_ENDPOINT=dead)
    loaded = subprocess.run([str(KERNELHUB), "get", "acme/offline", "--lockfile", str(lockfile), "--json"], env=env,
                            capture_output=True, text=True, timeout=120)
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    assert json.loads(loaded.stdout)["revision"] == commit
    assert len(s.upstream()) == requests_before

    # A lock whose hash the commit does not match is refused on the login node.
    hashes = project / "kernelhub.lock"
    text = hashes.read_text()
    start = text.index("sha256-") + len("sha256-")
    hashes.write_text(text[:start] + ("0" if text[start] != "0" else "1") + text[start + 1:])
    refused = login_node(s, tmp_path / "other-cache", "download", "--lockfile", str(lockfile), "--json")
    assert refused.returncode == 9
    assert json.loads(refused.stdout)["error"]["code"] == "integrity_mismatch", refused.stdout


def test_an_offline_rank_without_the_files_fails_with_a_typed_error(hub, tmp_path):
    s = hub()
    project = tmp_path / "project"
    project.mkdir()
    s.publish("acme/offline")
    (project / "kernels.toml").write_text('[dependencies]\n"acme/offline" = 1\n')
    assert login_node(s, tmp_path / "c", "lock", str(project)).returncode == 0
    (rank,) = node_results(run_nodes(s.node_command("acme/offline", "--lockfile", str(project / "kernels.lock")),
                                     [s.node_env(tmp_path / "empty", HF_HUB_OFFLINE="1")])[0])
    assert rank["rc"] == 1 and rank["error"]["code"] == "offline_miss", rank
