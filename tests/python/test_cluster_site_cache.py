"""Cluster scale, pattern 2 (docs/CLUSTER.md): a site cache in front of the Hub. nginx runs the
shipped configuration (docs/nginx/kernelhub-site-cache.conf) on loopback, `kernelhub serve`
advertises it as its public and storage URL, and N nodes are N processes with N caches
(`cluster_node`: get_kernel's fetch stage, without LibTorch). The Hub's request log is the
upstream log: each file must reach it once, however many nodes ask."""

from __future__ import annotations

import hashlib
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import BUILD_DIR

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH / "cluster"))
sys.path.insert(0, str(BENCH / "chaos"))

from fault_proxy import FaultProxy  # noqa: E402
from site_cache import WRITE_TOKEN, Site, free_port, nginx_binary, node_results, run_nodes  # noqa: E402

NODES = 64


@pytest.fixture
def site(tmp_path):
    """Factory: site(**Site kwargs) starts a Hub behind a site cache; all are stopped after."""
    if nginx_binary() is None:
        pytest.skip("nginx is not installed (scripts/bootstrap.sh --apt installs Debian's nginx-light)")
    for binary in ("kernelhub", "hub-publish", "cluster_node"):
        if not (BUILD_DIR / "bin" / binary).exists():
            pytest.skip(f"{BUILD_DIR / 'bin' / binary} is not built")
    if not list((BUILD_DIR / "kernels" / "build").glob("torch*-cpu-*")):
        pytest.skip("the reference kernels' CPU variant is not built (reference_kernels target)")
    sites = []

    def start(**kwargs) -> Site:
        s = Site(tmp_path / f"site{len(sites)}", BUILD_DIR, **kwargs)
        sites.append(s)
        return s.start()

    yield start
    for s in sites:
        s.stop()


def nodes(site: Site, work: Path, count: int, *how: str, repo: str = "acme/cluster", token: str | None = None):
    results, seconds = run_nodes(site.node_command(repo, *how),
                                 [site.node_env(work / f"node{i}", token=token) for i in range(count)])
    return node_results(results), seconds


def test_64_nodes_through_the_site_cache_reach_the_hub_once_per_file(site, tmp_path):
    s = site(ref_max_age=120)  # no branch answer expires during the run, however slow the machine
    commit = s.publish("acme/cluster")
    before = len(s.upstream())
    got, seconds = nodes(s, tmp_path / "wave1", NODES)
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
    again, _ = nodes(s, tmp_path / "wave2", 8)
    assert all(g["rc"] == 0 and g["commit"] == commit for g in again)
    assert s.upstream()[before:] == []


def test_a_new_publish_is_seen_once_the_branch_answer_expires_and_commits_stay_cached(site, tmp_path):
    ttl = 1
    s = site(ref_max_age=ttl)
    old = s.publish("acme/cluster")
    (first,), _ = nodes(s, tmp_path / "a", 1)
    assert first["commit"] == old
    new = s.publish("acme/cluster", marker="the new build")
    published = time.monotonic()
    seen = None
    for attempt in range(40):
        (g,), _ = nodes(s, tmp_path / f"b{attempt}", 1)
        assert g["rc"] == 0 and g["commit"] in (old, new), g
        if g["commit"] == new:
            seen = time.monotonic() - published
            assert "the new build" in (Path(g["path"]) / "layers.py").read_text()
            break
        time.sleep(0.25)
    # Within the branch answer's lifetime, plus one stale answer while nginx revalidates it.
    assert seen is not None and seen < ttl + 5, seen
    # Answers about a commit do not expire with the branch: the old commit loads from the cache.
    time.sleep(ttl + 0.5)
    before = len(s.upstream())
    (pinned,), _ = nodes(s, tmp_path / "c", 1, "--revision", old)
    assert pinned["rc"] == 0 and pinned["commit"] == old
    assert [t for _, t, _ in s.upstream()[before:] if old in t] == []


def test_private_answers_are_not_shared_and_public_ones_are_shared_with_tokens(site, tmp_path):
    s = site()
    s.publish("acme/secret", private=True)
    (owner,), _ = nodes(s, tmp_path / "owner", 1, repo="acme/secret", token=WRITE_TOKEN)
    assert owner["rc"] == 0
    before = len(s.upstream())
    (stranger,), _ = nodes(s, tmp_path / "stranger", 1, repo="acme/secret")
    assert stranger["rc"] == 1 and stranger["error"]["code"] == "not_found", stranger
    statuses = [status for _, _, status in s.upstream()[before:]]
    assert statuses and set(statuses) == {401}, statuses  # the Hub said no; the cache did not answer

    # A public repo's answers, fetched with a token, serve the next nodes, with or without one.
    commit = s.publish("acme/cluster")
    (first,), _ = nodes(s, tmp_path / "t1", 1, token=WRITE_TOKEN)
    before = len(s.upstream())
    (second,), _ = nodes(s, tmp_path / "t2", 1, token=WRITE_TOKEN)
    (third,), _ = nodes(s, tmp_path / "anon", 1)
    assert first["commit"] == second["commit"] == third["commit"] == commit
    assert s.upstream()[before:] == []


def test_errors_are_not_kept(site, tmp_path):
    s = site()
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


def test_a_bad_body_in_the_site_cache_is_refetched_and_replaced(site, tmp_path):
    s = site()
    s.publish("acme/cluster")
    (first,), _ = nodes(s, tmp_path / "first", 1)
    sha = library_sha256(Path(first["path"]))
    stored = cached_object(s.cache.cache_dir, f"/lfs-storage/{sha}".encode())
    data = bytearray(stored.read_bytes())
    data[-100] ^= 0x01  # the site cache now serves an altered library
    stored.write_bytes(bytes(data))

    before = len(s.upstream())
    (second,), _ = nodes(s, tmp_path / "second", 1)
    assert second["rc"] == 0, second
    assert library_sha256(Path(second["path"])) == sha
    refetched = [t for _, t, _ in s.upstream()[before:]]
    assert sum(t.startswith(f"/lfs-storage/{sha}") for t in refetched) == 1, refetched  # asked again, once
    assert not list((tmp_path / "second").rglob("*.incomplete"))
    # The fresh copy replaced the bad one: the next node gets it from the cache.
    before = len(s.upstream())
    (third,), _ = nodes(s, tmp_path / "third", 1)
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
        (cut,), _ = nodes(s, tmp_path / "cut", 1)
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


def test_the_hub_says_how_long_each_answer_may_be_kept(site):
    """Straight to the Hub (no cache): the Cache-Control the site cache acts on, and 304s."""
    import urllib.error
    import urllib.request

    s = site(ref_max_age=7)
    commit = s.publish("acme/cluster")
    s.publish("acme/secret", private=True)
    hub = f"http://127.0.0.1:{s.hub_port}"

    def head(path: str, token: str | None = None, **headers: str):
        request = urllib.request.Request(hub + path, headers={**headers, **({"Authorization": f"Bearer {token}"}
                                                                           if token else {})})
        try:
            with urllib.request.urlopen(request) as r:
                return r.status, r.headers
        except urllib.error.HTTPError as e:
            return e.code, e.headers

    status, h = head(f"/api/kernels/acme/cluster/revision/{commit}")
    assert status == 200 and h["Cache-Control"] == "public, max-age=31536000, immutable"
    status, h = head("/api/kernels/acme/cluster/revision/v1")
    assert status == 200 and h["Cache-Control"] == "public, max-age=7" and h["ETag"]
    assert head("/api/kernels/acme/cluster/revision/v1", **{"If-None-Match": h["ETag"]})[0] == 304
    assert head("/api/kernels/acme/cluster/refs")[1]["Cache-Control"] == "public, max-age=7"
    assert head(f"/api/kernels/acme/cluster/tree/{commit}")[1]["Cache-Control"].endswith("immutable")
    assert head("/api/kernels/acme/secret/revision/v1", WRITE_TOKEN)[1]["Cache-Control"] == "private"
    status, h = head("/api/kernels/acme/secret/revision/v1")
    assert status == 401 and h["Cache-Control"] == "no-store"
    assert head("/api/kernels/acme/cluster/revision/v9")[1]["Cache-Control"] == "no-store"
