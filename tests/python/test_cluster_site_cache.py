"""Cluster scale, pattern 2 (docs/CLUSTER.md): a site cache in front of the Hub. nginx runs the
shipped configuration (docs/nginx/kernelhub-site-cache.conf) on loopback, `kernelhub serve`
advertises it as its public and storage URL, and N nodes are N processes with N caches
(`cluster_node`: get_kernel's fetch stage, without LibTorch). The Hub's request log is the
upstream log: each file must reach it once, however many nodes ask."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from conftest import BUILD_DIR

from cluster_support import require_built, site  # noqa: F401  (a fixture)
from fault_proxy import FaultProxy
from site_cache import WRITE_TOKEN, Site, copy_variant, free_port, node_results, run_nodes

NODES = 64


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One Hub behind one site cache for the tests that each use repos of their own; no branch
    answer expires during them, however slow the machine."""
    require_built(nginx=True)
    s = Site(tmp_path_factory.mktemp("shared-site"), BUILD_DIR, ref_max_age=120).start()
    yield s
    s.stop()


def nodes(site: Site, work: Path, count: int, *how: str, repo: str, token: str | None = None):
    results, seconds = run_nodes(site.node_command(repo, *how),
                                 [site.node_env(work / f"node{i}", token=token) for i in range(count)])
    return node_results(results), seconds


def test_64_nodes_through_the_site_cache_reach_the_hub_once_per_file(shared, tmp_path):
    s = shared
    commit = s.publish("acme/wide")
    before = len(s.upstream())
    got, seconds = nodes(s, tmp_path / "wave1", NODES, repo="acme/wide")
    assert all(g["rc"] == 0 for g in got), [g for g in got if g["rc"]][:3]
    assert {g["commit"] for g in got} == {commit}
    upstream = s.upstream()[before:]
    counts = Counter(target for _, target, _ in upstream)
    assert all(n == 1 for n in counts.values()), counts.most_common(3)
    files = sorted(p.name for p in Path(got[0]["path"]).iterdir())
    resolves = [t for t in counts if "/resolve/" in t]
    assert all(f"/resolve/{commit}/" in t for t in resolves)  # files by commit: immutable answers
    assert sorted(t.rsplit("/", 1)[1] for t in resolves) == files
    redirected = sum(1 for _, t, status in upstream if "/resolve/" in t and status == 302)
    assert sum(1 for t in counts if t.startswith("/lfs-storage/")) == redirected > 0
    # Besides the files: the branch (revision), the listing at the commit, the publisher's trust.
    assert len(upstream) == len(files) + redirected + 3, upstream
    print(f"\n{NODES} nodes: {len(upstream)} upstream requests, all loaded in {seconds:.1f} s")

    # A second wave finds every answer in the site cache: nothing reaches the Hub.
    before = len(s.upstream())
    again, _ = nodes(s, tmp_path / "wave2", 8, repo="acme/wide")
    assert all(g["rc"] == 0 and g["commit"] == commit for g in again)
    assert s.upstream()[before:] == []


def test_a_new_publish_is_seen_once_the_branch_answer_expires_and_commits_stay_cached(site, tmp_path):
    ttl = 1
    s = site(ref_max_age=ttl)
    old = s.publish("acme/moving")
    cached = time.monotonic()  # the first node's answers, the branch's and the commit's, are cached from here
    (first,), _ = nodes(s, tmp_path / "a", 1, repo="acme/moving")
    assert first["commit"] == old
    # hub-publish through the cache, right after a publish the cache has seen: it must plan on
    # the branch as it is now, not on the cached answer (else the Hub refuses a stale parent).
    build = copy_variant(s.variant, tmp_path / "new-build", "the new build")
    r = subprocess.run([str(BUILD_DIR / "bin" / "hub-publish"), "acme/moving", "--build-dir", str(build),
                        "--version", "1", "--endpoint", s.url, "--json", "--quiet"],
                       env=dict(os.environ, HF_TOKEN=WRITE_TOKEN), capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    new = json.loads(r.stdout)["commit"]
    published = time.monotonic()
    seen = None
    for attempt in range(40):
        (g,), _ = nodes(s, tmp_path / f"b{attempt}", 1, repo="acme/moving")
        assert g["rc"] == 0 and g["commit"] in (old, new), g
        if g["commit"] == new:
            seen = time.monotonic() - published
            assert "the new build" in (Path(g["path"]) / "layers.py").read_text()
            break
        time.sleep(0.25)
    # Within the branch answer's lifetime, plus one stale answer while nginx revalidates it.
    assert seen is not None and seen < ttl + 5, seen
    # Answers about a commit do not expire with the branch: the old commit loads from the cache
    # once the branch answer cached with them is past its lifetime. nginx ages its cache on the
    # real clock, which no seam moves; the publish and the nodes above have spent most of that
    # time, so only what is left of it is waited (usually nothing).
    time.sleep(max(0.0, cached + ttl + 0.5 - time.monotonic()))
    before = len(s.upstream())
    (pinned,), _ = nodes(s, tmp_path / "c", 1, "--revision", old, repo="acme/moving")
    assert pinned["rc"] == 0 and pinned["commit"] == old
    assert [t for _, t, _ in s.upstream()[before:] if old in t] == []


def test_private_answers_are_not_shared_and_public_ones_are_shared_with_tokens(shared, tmp_path):
    s = shared
    s.publish("acme/secret", private=True)
    (owner,), _ = nodes(s, tmp_path / "owner", 1, repo="acme/secret", token=WRITE_TOKEN)
    assert owner["rc"] == 0
    before = len(s.upstream())
    (stranger,), _ = nodes(s, tmp_path / "stranger", 1, repo="acme/secret")
    assert stranger["rc"] == 1 and stranger["error"]["code"] == "not_found", stranger
    statuses = [status for _, _, status in s.upstream()[before:]]
    assert statuses and set(statuses) == {401}, statuses  # the Hub said no; the cache did not answer

    # A public repo's answers, fetched with a token, serve the next nodes, with or without one.
    commit = s.publish("acme/shared")
    (first,), _ = nodes(s, tmp_path / "t1", 1, repo="acme/shared", token=WRITE_TOKEN)
    before = len(s.upstream())
    (second,), _ = nodes(s, tmp_path / "t2", 1, repo="acme/shared", token=WRITE_TOKEN)
    (third,), _ = nodes(s, tmp_path / "anon", 1, repo="acme/shared")
    assert first["commit"] == second["commit"] == third["commit"] == commit
    assert s.upstream()[before:] == []


def test_the_hub_says_how_long_each_answer_may_be_kept(shared):
    """Straight to the Hub (no cache): the Cache-Control the site cache acts on, and 304s."""
    s = shared
    commit = s.publish("acme/headers")
    s.publish("acme/secret", private=True)
    hub = f"http://127.0.0.1:{s.hub_port}"

    def head(path: str, token: str | None = None, **headers: str):
        if token:
            headers["Authorization"] = f"Bearer {token}"
        try:
            with urllib.request.urlopen(urllib.request.Request(hub + path, headers=headers)) as r:
                return r.status, r.headers
        except urllib.error.HTTPError as e:
            return e.code, e.headers

    status, h = head(f"/api/kernels/acme/headers/revision/{commit}")
    assert status == 200 and h["Cache-Control"] == "public, max-age=31536000, immutable"
    status, h = head("/api/kernels/acme/headers/revision/v1")
    assert status == 200 and h["Cache-Control"] == "public, max-age=120" and h["ETag"]
    assert head("/api/kernels/acme/headers/revision/v1", **{"If-None-Match": h["ETag"]})[0] == 304
    assert head("/api/kernels/acme/headers/refs")[1]["Cache-Control"] == "public, max-age=120"
    assert head(f"/api/kernels/acme/headers/tree/{commit}")[1]["Cache-Control"].endswith("immutable")
    assert head("/api/organizations/acme/overview")[1]["Cache-Control"] == "public, max-age=120"
    assert head("/api/kernels/acme/secret/revision/v1", WRITE_TOKEN)[1]["Cache-Control"] == "private"
    status, h = head("/api/kernels/acme/secret/revision/v1")
    assert status == 401 and h["Cache-Control"] == "no-store"
    assert head("/api/kernels/acme/headers/revision/v9")[1]["Cache-Control"] == "no-store"


def test_errors_are_not_kept(shared, tmp_path):
    s = shared
    (missing,), _ = nodes(s, tmp_path / "before", 1, repo="acme/later")
    assert missing["rc"] == 1 and missing["error"]["code"] == "not_found"
    commit = s.publish("acme/later")  # right after a 404 for the same URL
    (found,), _ = nodes(s, tmp_path / "after", 1, repo="acme/later")
    assert found["rc"] == 0 and found["commit"] == commit


def cached_object(nginx_cache: Path, marker: bytes) -> Path:
    """The nginx cache file whose key (its `KEY: ` line) names `marker`."""
    for path in nginx_cache.rglob("*"):
        if not path.is_file():
            continue
        head = path.read_bytes()[:4096]
        key = head[head.find(b"\nKEY: "):].split(b"\n", 2)[1]
        if marker in key:
            return path
    raise AssertionError(f"no cached object for {marker!r}")


def library_sha256(variant_dir: Path) -> str:
    library = next(variant_dir.glob("*.so"))
    return hashlib.sha256(library.read_bytes()).hexdigest()


def test_a_bad_body_in_the_site_cache_is_refetched_and_replaced(shared, tmp_path):
    s = shared
    s.publish("acme/altered")
    (first,), _ = nodes(s, tmp_path / "first", 1, repo="acme/altered")
    sha = library_sha256(Path(first["path"]))
    stored = cached_object(s.cache.cache_dir, f"/lfs-storage/{sha}".encode())
    data = bytearray(stored.read_bytes())
    data[-100] ^= 0x01  # the site cache now serves an altered library
    stored.write_bytes(bytes(data))

    before = len(s.upstream())
    (second,), _ = nodes(s, tmp_path / "second", 1, repo="acme/altered")
    assert second["rc"] == 0, second
    assert library_sha256(Path(second["path"])) == sha
    refetched = [t for _, t, _ in s.upstream()[before:]]
    assert sum(t.startswith(f"/lfs-storage/{sha}") for t in refetched) == 1, refetched  # asked again, once
    assert not list((tmp_path / "second").rglob("*.incomplete"))
    # The fresh copy replaced the bad one: the next node gets it from the cache.
    before = len(s.upstream())
    (third,), _ = nodes(s, tmp_path / "third", 1, repo="acme/altered")
    assert third["rc"] == 0 and s.upstream()[before:] == []


def test_a_site_cache_that_truncates_or_alters_a_body_never_leaves_a_bad_blob(site, tmp_path):
    hub_port = free_port()
    proxy = FaultProxy(seed=3, fault_rate=1.0, faults=("truncate",), targets=("/lfs-storage/",), max_faults=1)
    proxy.upstream_port = hub_port
    proxy.start()
    try:
        s = site(hub_port=hub_port, upstream_port=proxy.ports[0])
        s.publish("acme/cluster")
        proxy.enabled = True
        # A body cut short on its way in: nginx keeps nothing, the node retries and loads.
        (cut,), _ = nodes(s, tmp_path / "cut", 1, repo="acme/cluster")
        assert cut["rc"] == 0, cut
        assert proxy.counts["truncate"] == 1

        # A body altered every time: a typed error, and the node's cache keeps no bad blob.
        proxy.faults, proxy.max_faults = ("corrupt",), None
        s.publish("acme/other", marker="other build")  # files nginx has not seen yet
        node_cache = tmp_path / "bad"
        (bad,), _ = nodes(s, node_cache, 1, repo="acme/other")
        assert bad["rc"] == 1 and bad["error"]["code"] == "integrity_mismatch", bad
        assert proxy.counts["corrupt"] >= 2  # a retry asked again, through the cache
        blobs = list((node_cache / "node0").rglob("blobs/*"))
        assert not [b for b in blobs if b.name.endswith(".incomplete")]
        for blob in blobs:  # every blob kept hashes to its name (sha256 or git blob sha1)
            data = blob.read_bytes()
            names = {hashlib.sha256(data).hexdigest(),
                     hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()}
            assert blob.name in names, blob
    finally:
        proxy.stop()

