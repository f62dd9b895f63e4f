"""Simulated cluster pieces on loopback, for tests/python/test_cluster_*.py and run_cluster.py:
nginx running the shipped site-cache configuration (docs/nginx/kernelhub-site-cache.conf) in front
of a `kernelhub serve` that advertises the cache as its address, and N nodes as N processes with
N caches (`cluster_node`, the fetch stage of get_kernel without LibTorch: tests/cluster/).

    site = Site(work, build_dir).start()        # the Hub and nginx in front of it
    commit = site.publish("acme/k")             # the built CPU variant, as branch v1
    results, seconds = run_nodes(site.node_command("acme/k"), [site.node_env(work / f"n{i}") ...])
    site.upstream()                              # what reached the Hub: [(method, target, status)]
    site.stop()

nginx comes from Debian (scripts/bootstrap.sh installs it); `nginx_binary()` is None without it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from hub_server import copy_variant  # noqa: E402  (bench/hub_server.py)

SITE_CONF = ROOT / "docs" / "nginx" / "kernelhub-site-cache.conf"


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


class SiteCache:
    """nginx with the shipped configuration, its three @...@ values filled in, in its own folder."""

    def __init__(self, work: Path, upstream_port: int, port: int | None = None):
        self.work = work
        self.upstream_port = upstream_port
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"          # the Hub's public URL
        self.storage_url = f"http://localhost:{self.port}"  # its storage URL: another host name
        self.cache_dir = work / "cache"
        self.process: subprocess.Popen | None = None

    def render(self) -> Path:
        self.work.mkdir(parents=True, exist_ok=True)
        site = (SITE_CONF.read_text().replace("@LISTEN@", f"127.0.0.1:{self.port}")
                .replace("@UPSTREAM@", f"127.0.0.1:{self.upstream_port}")
                .replace("@CACHE_DIR@", str(self.cache_dir)))
        (self.work / "site.conf").write_text(site)
        temp = {name: self.work / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
        for path in temp.values():
            path.mkdir(exist_ok=True)
        main = self.work / "nginx.conf"
        main.write_text("\n".join([
            # As root, nginx's workers would run as `nobody`, who cannot write to this folder.
            "user root;" if os.geteuid() == 0 else "",
            "worker_processes 2;",
            f"pid {self.work / 'nginx.pid'};",
            f"error_log {self.work / 'error.log'} warn;",
            "events { worker_connections 4096; }",
            "http {",
            "  log_format cache '$request_method $request_uri $status $upstream_cache_status';",
            f"  access_log {self.work / 'access.log'} cache;",
            f"  client_body_temp_path {temp['body']};",
            f"  proxy_temp_path {temp['proxy']};",
            f"  fastcgi_temp_path {temp['fastcgi']};",
            f"  uwsgi_temp_path {temp['uwsgi']};",
            f"  scgi_temp_path {temp['scgi']};",
            f"  include {self.work / 'site.conf'};",
            "}", ""]))
        return main

    def start(self) -> "SiteCache":
        binary = nginx_binary()
        if binary is None:
            raise RuntimeError("nginx is not installed (scripts/bootstrap.sh --apt installs it)")
        main = self.render()
        self.process = subprocess.Popen([binary, "-p", str(self.work), "-c", str(main), "-g", "daemon off;"],
                                        stdout=subprocess.DEVNULL, stderr=open(self.work / "nginx.stderr", "wb"))
        try:
            wait_for_port(self.port)
        except RuntimeError:
            self.stop()
            raise RuntimeError("nginx did not start: " + (self.work / "nginx.stderr").read_text(errors="replace")
                               + (self.work / "error.log").read_text(errors="replace")) from None
        return self

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # fast shutdown
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def access_log(self) -> list[str]:
        path = self.work / "access.log"
        return path.read_text(errors="replace").splitlines() if path.exists() else []


def upstream_requests(log_text: str) -> list[tuple[str, str, int]]:
    """(method, target, status) for each line of a `kernelhub serve --log-requests` log."""
    out = []
    for line in log_text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0] in ("GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"):
            out.append((parts[0], parts[1], int(parts[2])))
    return out


def run_nodes(command: list[str], envs: list[dict], parallel: int | None = None,
              timeout: float = 300) -> tuple[list[subprocess.CompletedProcess], float]:
    """Starts one process per environment, all at once (or `parallel` at a time); returns their
    results and the seconds until the last one ended."""
    started = time.monotonic()

    def one(env: dict) -> subprocess.CompletedProcess:
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)

    with ThreadPoolExecutor(max_workers=parallel or len(envs)) as pool:
        results = list(pool.map(one, envs))
    return results, time.monotonic() - started


WRITE_TOKEN = "hf_cluster_write_alice"


def variant_overrides(variant: str) -> dict:
    """KERNELHUB_* overrides describing the machine a variant name was built for, so a torch-free
    node selects it as a process with that LibTorch would (torch215-cxx11-cpu-x86_64-linux)."""
    m = re.match(r"torch(\d)(\d+)-cxx11-([a-z]+[0-9]*)-", variant)
    if not m:
        raise ValueError(f"not a torch variant name: {variant}")
    return {"KERNELHUB_TORCH": f"{m.group(1)}.{m.group(2)}", "KERNELHUB_CXX11_ABI": "1",
            "KERNELHUB_BACKEND": m.group(3)}


class Site:
    """`kernelhub serve` on a loopback port, advertising the site cache (nginx) in front of it as
    its public and storage URL; LFS from 4 KiB so the op library goes through storage.
    Without a cache (`cache=False`) the Hub advertises itself, or `front` (public URL, storage URL)
    when something else stands in front of it (a fault proxy forwarding to `hub_port`)."""

    def __init__(self, work: Path, build: Path, ref_max_age: int = 10, extra_args: tuple = (),
                 hub_port: int | None = None, upstream_port: int | None = None, cache: bool = True,
                 front: tuple[str, str] | None = None):
        """`upstream_port`: where nginx forwards to, when not straight to the Hub (a fault proxy
        in between, forwarding to `hub_port`)."""
        self.work = work
        self.build = build
        self.hub_port = hub_port or free_port()
        self.cache = SiteCache(work / "nginx", upstream_port=upstream_port or self.hub_port) if cache else None
        direct = (f"http://127.0.0.1:{self.hub_port}", f"http://localhost:{self.hub_port}")
        self.url, self.storage_url = (self.cache.url, self.cache.storage_url) if cache else (front or direct)
        self.log_path = work / "server.log"
        self.ref_max_age = ref_max_age
        self.extra_args = list(extra_args)
        self.server: subprocess.Popen | None = None
        self.commits: set[str] = set()  # published so far
        self.variant = next((build / "kernels" / "build").glob("torch*-cpu-*"))

    def start(self) -> "Site":
        self.work.mkdir(parents=True, exist_ok=True)
        (self.work / "tokens.json").write_text(json.dumps({
            "tokens": {WRITE_TOKEN: {"user": "alice", "orgs": ["acme"], "write": True}},
            "organizations": {"acme": {"trustedKernelPublisher": True}}}))
        self.server = subprocess.Popen(
            [str(self.build / "bin" / "kernelhub"), "serve", "--root", str(self.work / "hub-root"),
             "--port", str(self.hub_port), "--tokens", str(self.work / "tokens.json"), "--log-requests",
             "--lfs-threshold", "4096", "--ref-max-age", str(self.ref_max_age), "--public-url", self.url,
             "--storage-url", self.storage_url, *self.extra_args],
            stdout=subprocess.DEVNULL, stderr=open(self.log_path, "wb"))
        wait_for_port(self.hub_port)
        if self.cache:
            self.cache.start()
        return self

    def stop(self) -> None:
        if self.cache:
            self.cache.stop()
        if self.server and self.server.poll() is None:
            self.server.send_signal(signal.SIGTERM)
            try:
                self.server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()

    def publish(self, repo: str, marker: str | None = None, private: bool = False, version: int = 1) -> str:
        """Publishes the built CPU variant (with `marker` appended to layers.py, its digest
        dropped, when given) as branch v<version>, through whatever the Hub advertises (the site
        cache), as its users reach it; returns the commit. huggingface_hub's HfApi: a tenth of
        hub-publish's time, which starts LibTorch for its pre-flight."""
        os.environ.setdefault("HF_HUB_DISABLE_XET", "1")  # read at import: kernelhub serve speaks LFS
        from huggingface_hub import CommitOperationAdd, HfApi

        variant = self.variant
        if marker:
            build_dir = self.work / "publish" / marker.replace(" ", "-")
            if not build_dir.exists():
                copy_variant(self.variant, build_dir, marker)
            variant = build_dir / self.variant.name
        api = HfApi(endpoint=self.url, token=WRITE_TOKEN)
        api.create_repo(repo, repo_type="kernel", private=private, exist_ok=True)
        api.create_branch(repo, repo_type="kernel", branch=f"v{version}", exist_ok=True)
        ops = [CommitOperationAdd(path_in_repo=f"build/{variant.name}/{f.name}", path_or_fileobj=str(f))
               for f in sorted(variant.iterdir()) if f.is_file()]
        commits = lambda: sum(1 for m, t, _ in self.upstream() if m == "POST" and f"/{repo}/commit/" in t)  # noqa: E731
        before = commits()
        commit = api.create_commit(repo, repo_type="kernel", revision=f"v{version}", operations=ops,
                                   commit_message="publish").oid
        # The server logs a request after answering it: wait for the line, so that a caller's
        # count of upstream requests from here on holds none of the publish's. (huggingface_hub
        # sends no commit when nothing changed: then there is no line to wait for.)
        deadline = time.monotonic() + 5
        while commits() == before and commit not in self.commits and time.monotonic() < deadline:
            time.sleep(0.01)
        self.commits.add(commit)
        return commit

    def node_env(self, cache_dir: Path, token: str | None = None, own_torch: bool = False, **extra: str) -> dict:
        """A node's environment: this Hub, its own cache; the machine described by KERNELHUB_*
        overrides for the published variant (cluster_node has no LibTorch), or with `own_torch`
        as the process's own LibTorch makes it (`kernelhub get`, Python)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "KERNELHUB_", "KERNELS_"))}
        env.update(HF_ENDPOINT=self.url, HF_HUB_CACHE=str(cache_dir), KERNELHUB_STATE_DIR=str(cache_dir / ".state"),
                   **({} if own_torch else variant_overrides(self.variant.name)))
        if token:
            env["HF_TOKEN"] = token
        env.update(extra)
        return env

    def node_command(self, repo: str, *how: str) -> list[str]:
        return [str(self.build / "bin" / "cluster_node"), repo, *(how or ("--version", "1"))]

    def upstream(self) -> list[tuple[str, str, int]]:
        return upstream_requests(self.log_path.read_text(errors="replace"))


def node_results(results: list[subprocess.CompletedProcess]) -> list[dict]:
    """Each node's JSON document (or {"error": ..., "rc": ...})."""
    out = []
    for r in results:
        try:
            got = json.loads(r.stdout)
        except json.JSONDecodeError:
            got = {"error": {"code": "no_output", "message": r.stdout[-1000:] + r.stderr[-2000:]}}
        got["rc"] = r.returncode
        out.append(got)
    return out
