"""When things go wrong, through the CLI as a user meets it: a Hub that refuses connections or
accepts and never answers (a warm cache answers at once and says so; a cold one fails at once,
naming HF_HUB_OFFLINE and the timeouts), a cached file that changed on disk (`get` names its blob
and the command that repairs it; `download` and `cache verify --repair` repair it), a download
killed mid-file (continued with Range), and a login node without a GPU preparing the cache for GPU
nodes (docs/CLUSTER.md, pattern 3)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cluster_support import hub  # noqa: F401  (a fixture)
from conftest import BUILD_DIR
from fault_proxy import FaultProxy, SilentServer
from site_cache import Site, free_port, node_results, run_nodes

KERNELHUB = BUILD_DIR / "bin" / "kernelhub"
REPO = "acme/resilient"


def kernelhub(env: dict, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(KERNELHUB), *args], env=env, capture_output=True, text=True, timeout=timeout)


def user_env(site: Site, cache: Path, **extra: str) -> dict:
    """A user's machine: its own torch (the test's venv), this Hub, its own cache and state."""
    env = site.node_env(cache, own_torch=True, **extra)
    env["VIRTUAL_ENV"] = sys.prefix
    return env


def warm(site: Site, cache: Path) -> dict:
    """Publishes REPO and loads it once into `cache`: the cache a user has."""
    site.publish(REPO)
    got = kernelhub(user_env(site, cache), "get", REPO, "--version", "1", "--json")
    assert got.returncode == 0, got.stderr
    return json.loads(got.stdout)


def library(loaded: dict) -> Path:
    return next(p for p in Path(loaded["path"]).iterdir() if p.suffix == ".so")


def test_a_refused_connection_with_a_warm_cache_loads_at_once_and_says_so(hub, tmp_path):
    s = hub()
    cache = tmp_path / "cache"
    loaded = warm(s, cache)
    s.stop()  # the Hub goes down: its address refuses connections
    env = user_env(s, cache)

    got = kernelhub(env, "get", REPO, "--version", "1", "--json")
    assert got.returncode == 0, got.stderr
    out = json.loads(got.stdout)
    assert out["revision"] == loaded["revision"]
    assert out["requests"] == 1  # the revision, once: refused, not retried; nothing else asked
    notes = out["fallbacks"]
    assert any("cached commit" in n and "revision `v1`" in n for n in notes), notes
    assert any("trusted kernel publisher" in n and "when last asked" in n for n in notes), notes
    assert "kernelhub get: note: the Hub could not be reached" in got.stderr

    downloaded = kernelhub(env, "download", REPO, "--version", "1", "--json")
    assert downloaded.returncode == 0, downloaded.stderr
    out = json.loads(downloaded.stdout)
    assert out["requests"] == 1 and out["commit"] == loaded["revision"]
    assert out["fallbacks"] and "kernelhub download: note:" in downloaded.stderr


def test_a_hub_that_never_answers_costs_one_timeout_and_the_cache_answers(hub, tmp_path):
    s = hub()
    cache = tmp_path / "cache"
    warm(s, cache)
    s.stop()
    silent = SilentServer(s.hub_port)  # the Hub hangs: its address accepts and never answers
    try:
        env = user_env(s, cache, HF_HUB_ETAG_TIMEOUT="1", HF_HUB_DOWNLOAD_TIMEOUT="1")
        got = kernelhub(env, "get", REPO, "--version", "1", "--json")
        assert got.returncode == 0, got.stderr
        out = json.loads(got.stdout)
        assert out["requests"] == 1
        assert any("did not answer" in n for n in out["fallbacks"]), out["fallbacks"]
        assert len(silent.held) == 1  # one connection: one request, given up on after its timeout
    finally:
        silent.close()


def test_without_a_cache_an_unreachable_hub_fails_at_once_saying_what_to_do(hub, tmp_path):
    s = hub()
    s.publish(REPO)
    env = user_env(s, tmp_path / "empty", HF_ENDPOINT=f"http://127.0.0.1:{free_port()}")
    for command in (["get", REPO, "--version", "1", "--json"], ["download", REPO, "--version", "1", "--json"]):
        r = kernelhub(env, *command)
        assert r.returncode == 5, (command, r.stdout, r.stderr)  # 5: the Hub could not be reached
        error = json.loads(r.stdout)["error"]
        assert error["code"] == "network", error
        for needed in ("could not be reached", "1 attempt", "HF_HUB_OFFLINE=1", "HF_HUB_ETAG_TIMEOUT",
                       "KERNELHUB_CONNECT_TIMEOUT", "HF_HUB_DOWNLOAD_TIMEOUT"):
            assert needed in error["message"], (needed, error["message"])
        assert f"kernelhub {command[0]}: error: " in r.stderr, r.stderr


def flip_a_byte(path: Path, at: int = 4096) -> None:
    with open(path.resolve(), "r+b") as f:
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 0x01]))


def test_a_flipped_byte_in_the_cache_is_named_by_its_blob_and_repaired_by_download(hub, tmp_path):
    s = hub()
    cache = tmp_path / "cache"
    loaded = warm(s, cache)
    so = library(loaded)
    blob = so.resolve().name
    flip_a_byte(so)
    env = user_env(s, cache)

    refused = kernelhub(env, "get", REPO, "--version", "1", "--json")
    assert refused.returncode == 9, refused.stderr  # 9: a file is not what it should be
    message = json.loads(refused.stdout)["error"]["message"]
    assert "changed in the cache" in message and blob in message, message
    command = message.split("Repair it with: ", 1)[1].split()
    assert command[:2] == ["kernelhub", "download"], message

    repaired = kernelhub(env, *command[1:], "--json")  # the exact command the error gave
    assert repaired.returncode == 0, repaired.stderr
    out = json.loads(repaired.stdout)
    assert [r["path"] for r in out["repaired"]] == [f"build/{loaded['variant']}/{so.name}"]
    assert Path(out["repaired"][0]["blob"]).name == blob
    assert f"repaired `build/{loaded['variant']}/{so.name}`" in repaired.stderr
    assert kernelhub(env, "get", REPO, "--version", "1").returncode == 0

    # --force downloads every file again, intact or not.
    forced = kernelhub(env, "download", REPO, "--version", "1", "--force", "--json")
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["downloaded_bytes"] == json.loads(forced.stdout)["bytes"]


def test_cache_verify_reports_and_repairs(hub, tmp_path):
    s = hub()
    cache = tmp_path / "cache"
    loaded = warm(s, cache)
    env = user_env(s, cache)
    clean = kernelhub(env, "cache", "verify", "--json")
    assert clean.returncode == 0, clean.stderr
    assert json.loads(clean.stdout)["intact"] is True

    so = library(loaded)
    flip_a_byte(so)
    found = kernelhub(env, "cache", "verify", "--json")
    assert found.returncode == 9, found.stderr
    (repo,) = json.loads(found.stdout)["repos"]
    (changed,) = repo["changed"]
    assert Path(changed["blob"]).name == so.resolve().name
    assert changed["used_by"] == [{"commit": loaded["revision"], "path": f"build/{loaded['variant']}/{so.name}"}]
    text = kernelhub(env, "cache", "verify")
    assert "changed in the cache" in text.stdout and "--repair" in text.stdout

    fixed = kernelhub(env, "cache", "verify", "--repair", "--json")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert json.loads(fixed.stdout)["repos"][0]["repaired"] is True
    assert kernelhub(env, "cache", "verify").returncode == 0
    assert kernelhub(env, "get", REPO, "--version", "1").returncode == 0


def test_a_download_killed_mid_file_is_continued_with_range(tmp_path):
    from cluster_support import require_built

    require_built()
    hub_port = free_port()
    proxy = FaultProxy(fault_rate=1.0, faults=("stall_mid",), stall_s=60, targets=("/lfs-storage/",))
    proxy.upstream_port = hub_port
    proxy.start()
    s = Site(tmp_path / "site", BUILD_DIR, hub_port=hub_port, cache=False, front=(proxy.hub_url, proxy.storage_url))
    s.start()
    try:
        s.publish(REPO)
        cache = tmp_path / "cache"
        env = user_env(s, cache)
        proxy.enabled = True  # every storage body stalls part-way
        victim = subprocess.Popen([str(KERNELHUB), "download", REPO, "--version", "1", "--quiet"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        partial = []
        while time.monotonic() < deadline and not partial:
            partial = [p for p in cache.rglob("*.incomplete") if p.stat().st_size > 0]
            time.sleep(0.05)
        assert partial, "the download never started"
        time.sleep(0.3)
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        kept = {p.name.split(".")[0]: p.stat().st_size for p in cache.rglob("*.incomplete")}
        proxy.enabled = False

        before = len(s.log_path.read_text().splitlines())
        got = kernelhub(env, "download", REPO, "--version", "1", "--json")
        assert got.returncode == 0, got.stderr
        out = json.loads(got.stdout)
        assert out["resumed_bytes"] == sum(kept.values()) > 0, (out, kept)
        # Nothing fetched twice: what the killed process had finished is not fetched again, and of
        # what it had begun, only the rest.
        assert out["downloaded_bytes"] + out["resumed_bytes"] <= out["bytes"]
        ranges = [line for line in s.log_path.read_text().splitlines()[before:] if "range=bytes=" in line]
        assert any(f"range=bytes={size}-" in line for line in ranges for size in kept.values()), ranges
        assert not list(cache.rglob("*.incomplete"))
        assert kernelhub(env, "cache", "verify").returncode == 0
    finally:
        s.stop()
        proxy.stop()


def publish_cpu_and_cuda(site: Site, repo: str, work: Path) -> tuple[str, str]:
    """Publishes the built CPU variant and the same files as the CUDA 12.8 variant of its torch
    (a stand-in: no CUDA is built here); returns their names."""
    from huggingface_hub import CommitOperationAdd, HfApi

    cpu = site.variant
    cuda = cpu.name.replace("-cpu-", "-cu128-")
    ops = []
    for name in (cpu.name, cuda):
        ops += [CommitOperationAdd(path_in_repo=f"build/{name}/{f.name}", path_or_fileobj=str(f))
                for f in sorted(cpu.iterdir()) if f.is_file()]
    api = HfApi(endpoint=site.url, token="hf_cluster_write_alice")
    api.create_repo(repo, repo_type="kernel", exist_ok=True)
    api.create_branch(repo, repo_type="kernel", branch="v1", exist_ok=True)
    api.create_commit(repo, repo_type="kernel", revision="v1", operations=ops, commit_message="publish")
    return cpu.name, cuda


def test_a_login_node_without_a_gpu_prepares_the_cache_for_gpu_nodes(hub, tmp_path):
    """docs/CLUSTER.md pattern 3, for a GPU target: the login node names the nodes' torch."""
    s = hub()
    cpu, cuda = publish_cpu_and_cuda(s, "acme/gpu-kernels", tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    (project / "kernels.toml").write_text('[dependencies]\n"acme/gpu-kernels" = 1\n')
    shared = tmp_path / "shared" / "hf-cache"
    login = s.node_env(shared)  # the harness's KERNELHUB_* say nothing of a GPU: drop them
    login = {k: v for k, v in login.items() if not k.startswith("KERNELHUB_")}
    login["KERNELHUB_STATE_DIR"] = str(tmp_path / "login-state")
    torch = cpu.split("-")[0]  # torch215
    spec = f"{torch[5]}.{torch[6:]}.0+cu128"

    assert kernelhub(login, "lock", str(project)).returncode == 0
    got = kernelhub(login, "download", "--lockfile", str(project / "kernels.lock"), "--torch", spec, "--json")
    assert got.returncode == 0, got.stderr
    (kernel,) = json.loads(got.stdout)["kernels"]
    assert kernel["variants"] == [cuda], kernel  # not the CPU variant "for this machine"
    assert "the GPU fit is skipped" in got.stderr, got.stderr

    # The variants trace says the same, and with the target's GPUs given, that their fit could not
    # be checked (this stand-in's metadata.json names no CUDA archs).
    trace = kernelhub(dict(login, KERNELHUB_GPUS="9.0"), "variants", "acme/gpu-kernels", "--version", "1", "--torch",
                      spec, "--json")
    assert trace.returncode == 0, trace.stderr
    (decided,) = json.loads(trace.stdout)["revisions"]
    assert decided["chosen"] == cuda
    first = decided["variants"][0]
    assert first["variant"] == cuda and first["fit_not_checked"] == "metadata.json names no CUDA archs"
    assert "(GPU fit not checked: metadata.json names no CUDA archs)" in kernelhub(
        dict(login, KERNELHUB_GPUS="9.0"), "variants", "acme/gpu-kernels", "--version", "1", "--torch", spec).stdout

    # A GPU node: offline, the Hub unreachable, its own torch and driver (KERNELHUB_* stand in for
    # them: the node process here has no LibTorch); it finds the variant in the shared cache.
    dead = f"http://127.0.0.1:{free_port()}"
    node = s.node_env(shared, HF_HUB_OFFLINE="1", HF_ENDPOINT=dead, KERNELHUB_TORCH=f"{torch[5]}.{torch[6:]}",
                      KERNELHUB_CXX11_ABI="1", KERNELHUB_BACKEND="cuda12.8", KERNELHUB_CUDA_DRIVER="13.0",
                      KERNELHUB_STATE_DIR=str(tmp_path / "node-state"))
    (rank,) = node_results(run_nodes(s.node_command("acme/gpu-kernels", "--lockfile",
                                                    str(project / "kernels.lock")), [node])[0])
    assert rank["rc"] == 0 and rank["variant"] == cuda and rank["requests"] == 0, rank


def test_one_exit_status_for_one_kind_of_failure(hub, tmp_path):
    s = hub()
    s.publish(REPO)
    env = user_env(s, tmp_path / "cache")
    # An invalid repo id is bad usage in every command, with one line of usage, not the help.
    for command in (["get", "not a repo"], ["download", "not a repo"], ["variants", "not a repo"]):
        r = kernelhub(env, *command)
        assert r.returncode == 2, (command, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) <= 2 and lines[-1].startswith(("usage:", f"kernelhub {command[0]}: error")), r.stderr
    # A repo that does not exist is not found, whoever its publisher (no trust question first).
    for command in (["get", "acme/nothing-here", "--version", "1"], ["download", "acme/nothing-here", "--version", "1"],
                    ["get", "nobody/nothing-here", "--version", "1"]):
        r = kernelhub(env, *command, "--json")
        assert r.returncode == 3, (command, r.stdout, r.stderr)
        assert json.loads(r.stdout)["error"]["code"] == "not_found"
    project = tmp_path / "project"
    project.mkdir()
    (project / "kernels.toml").write_text('[dependencies]\n"nobody/nothing-here" = 1\n')
    locked = kernelhub(env, "lock", str(project), "--json")
    assert locked.returncode == 3 and json.loads(locked.stdout)["error"]["code"] == "not_found", locked.stdout
    # A missing lock file is said before the missing torch.
    no_torch = {k: v for k, v in env.items() if k not in ("VIRTUAL_ENV",)}
    no_torch["PATH"] = "/nonexistent"
    missing = kernelhub(no_torch, "download", "--lockfile", str(tmp_path / "missing.lock"), "--json")
    assert missing.returncode == 3, missing.stderr
    assert "missing.lock" in json.loads(missing.stdout)["error"]["message"]
    # A publisher the Hub does not trust: 8; offline and not cached: 6.
    s.publish("alice/kernels")  # a user's namespace: no trusted publisher
    untrusted = kernelhub(env, "get", "alice/kernels", "--version", "1", "--json")
    assert untrusted.returncode == 8 and json.loads(untrusted.stdout)["error"]["code"] == "untrusted_publisher"
    offline = kernelhub(dict(env, HF_HUB_OFFLINE="1"), "get", REPO, "--version", "1", "--json")
    assert offline.returncode == 6 and json.loads(offline.stdout)["error"]["code"] == "offline_miss"


def test_verify_checks_the_digest_without_a_key_and_fails_when_nothing_can_be_checked(tmp_path):
    from cluster_support import require_built

    require_built()
    variant = next((BUILD_DIR / "kernels" / "build").glob("torch*-cpu-*"))
    copy = tmp_path / variant.name
    shutil.copytree(variant, copy, ignore=shutil.ignore_patterns("__pycache__"))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "KERNELHUB_TRUSTED_KEYS": ""}
    ok = kernelhub(env, "verify", str(copy), "--repo", REPO)
    assert ok.returncode == 0, ok.stderr
    assert "digest OK" in ok.stdout and "not signed (get_kernel warns; --require refuses)" in ok.stdout
    so = next(p for p in copy.iterdir() if p.suffix == ".so")
    flip_a_byte(so)
    changed = kernelhub(env, "verify", str(copy), "--repo", REPO)
    assert changed.returncode == 9 and "do not match metadata.json" in changed.stderr, changed.stderr
    meta = json.loads((copy / "metadata.json").read_text())
    meta.pop("digest")
    (copy / "metadata.json").write_text(json.dumps(meta))
    nothing = kernelhub(env, "verify", str(copy), "--repo", REPO)
    assert nothing.returncode == 8 and "nothing to check" in nothing.stderr, nothing.stderr


def test_a_second_server_on_a_busy_port_fails_at_start(kernelhub_serve, tmp_path):
    first = kernelhub_serve()
    port = first.url.rsplit(":", 1)[1]
    second = subprocess.run([str(KERNELHUB), "serve", "--root", str(tmp_path / "other-root"), "--port", port],
                            capture_output=True, text=True, timeout=30)
    assert second.returncode == 1, second.stdout + second.stderr
    assert f"cannot listen on 127.0.0.1:{port}: the port is already in use" in second.stderr, second.stderr
    assert first.process.poll() is None  # the first one serves on
