"""Shared pytest fixtures for kernelhub's Python-level tests.

`kernelhub_serve` starts `build/bin/kernelhub serve --root <tmp> --port 0` (our C++ Hub server)
and stops it after the test; the build directory comes from KERNELHUB_BUILD_DIR (default
build/ of this checkout). Tests that need a server are skipped, with the reason, when the binary has
not been built.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# Children start with this checkout as their working directory; a `python -c` child would put it
# first on sys.path, where the C++ layer folder `sigstore/` reads as a namespace package `sigstore`,
# and the `kernels` package would take it for sigstore-python. Children leave the working
# directory off sys.path.
os.environ.setdefault("PYTHONSAFEPATH", "1")
# Every test talks to `kernelhub serve`, which speaks the git-LFS upload path, not Xet; set it
# before any test module imports huggingface_hub (which reads it once, at import).
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
# The CLI's torch-free commands select variants for the torch of the Python environment, found
# through VIRTUAL_ENV or python3 on PATH (resolver/torch_lookup.hpp): name the environment that
# runs the tests (`.venv/bin/python -m pytest` activates nothing), whose torch the build used.
if sys.prefix != sys.base_prefix:
    os.environ.setdefault("VIRTUAL_ENV", sys.prefix)

BUILD_DIR = Path(os.environ.get("KERNELHUB_BUILD_DIR", Path(__file__).resolve().parents[2] / "build"))
KERNELHUB_BIN = BUILD_DIR / "bin" / "kernelhub"

WRITE_TOKEN = "hf_kernelhub_test_write_alice"
READ_TOKEN = "hf_kernelhub_test_read_bob"
OTHER_WRITE_TOKEN = "hf_kernelhub_test_write_carol"  # writes to her own namespace only


@dataclass
class HubServer:
    """A running `kernelhub serve` process."""

    url: str
    storage_url: str
    root: Path
    log_path: Path
    process: subprocess.Popen
    args: list = field(default_factory=list)

    write_token: str = WRITE_TOKEN
    read_token: str = READ_TOKEN
    other_write_token: str = OTHER_WRITE_TOKEN

    def log(self) -> str:
        """The request log (one `METHOD target status range=...` line per request)."""
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def client_env(self, cache_dir: Path) -> dict:
        """Environment for a child Python process that should talk to this server."""
        env = dict(os.environ)
        # Not HF_HUB_DISABLE_TELEMETRY: with it, kernels 0.17.2 + huggingface_hub 2.4 build a
        # user agent ending in "; ", which httpx refuses as an illegal header value.
        env.pop("HF_HUB_DISABLE_TELEMETRY", None)
        env.update(
            HF_ENDPOINT=self.url,
            HF_HUB_DISABLE_XET="1",
            HF_HUB_CACHE=str(cache_dir),
            KERNELS_CACHE=str(cache_dir),
            HF_TOKEN=self.write_token,
            HF_HUB_ETAG_TIMEOUT="30",
            HF_HUB_DOWNLOAD_TIMEOUT="30",
        )
        return env


def _start_server(tmp_path: Path, extra_args: list[str], binary: Path = KERNELHUB_BIN) -> HubServer:
    if not binary.exists():
        pytest.skip(f"{binary} is not built (set KERNELHUB_BUILD_DIR or build the `kernelhub` target)")
    tmp_path.mkdir(parents=True, exist_ok=True)
    tokens = tmp_path / "tokens.json"
    tokens.write_text(
        json.dumps(
            {
                "tokens": {
                    WRITE_TOKEN: {"user": "alice", "orgs": ["acme"], "write": True},
                    READ_TOKEN: {"user": "bob", "write": False},
                    OTHER_WRITE_TOKEN: {"user": "carol", "write": True},
                },
                "organizations": {"acme": {"fullname": "Acme Kernels", "trustedKernelPublisher": True}},
            }
        )
    )
    root = tmp_path / "hub-root"
    log_path = tmp_path / "server.log"
    args = [str(binary), "serve", "--root", str(root), "--port", "0", "--tokens", str(tokens),
            "--log-requests", *extra_args]
    log = open(log_path, "wb")
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, text=True)
    log.close()
    deadline = time.monotonic() + 20
    url = storage = None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        match = re.search(r"listening on (\S+) \(storage (\S+),", line)
        if match:
            url, storage = match.group(1), match.group(2)
            break
    if url is None:
        process.kill()
        raise RuntimeError(f"kernelhub serve did not start: {log_path.read_text(errors='replace')}")
    return HubServer(url=url, storage_url=storage, root=root, log_path=log_path, process=process, args=args)


@pytest.fixture
def kernelhub_serve(tmp_path):
    """Factory: `kernelhub_serve(*extra_args)` starts a server; all are stopped after the test."""
    servers = []

    def start(*extra_args: str) -> HubServer:
        server = _start_server(tmp_path / f"server{len(servers)}", list(extra_args))
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="module")
def hub_server(tmp_path_factory):
    """One server per test module, with small tree pages (2) and small multipart chunks (4 MiB)
    so that pagination and multipart uploads are exercised by ordinary clients."""
    server = _start_server(tmp_path_factory.mktemp("hub"), ["--tree-page-size", "2", "--multipart-chunk", str(4 << 20)])
    yield server
    server.stop()
