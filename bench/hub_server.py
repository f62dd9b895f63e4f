"""`kernelhub serve` on a free loopback port for the benchmark scripts (bench/client, bench/load).

    from hub_server import start_server          # with bench/ on sys.path
    proc, url = start_server(KERNELHUB_BIN, work, token="hf_x", user="bench")

Writes work/tokens.json (one write token for `user`, member of `org`, a trusted kernel publisher),
serves work/root with the request log on (work/server.log) and returns the process and the URL it
prints. Raises SystemExit with the server's log when it does not start.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path


def start_server(kernelhub: Path, work: Path, *, token: str, user: str, org: str = "acme"):
    (work / "tokens.json").write_text(json.dumps({
        "tokens": {token: {"user": user, "orgs": [org], "write": True}},
        "organizations": {org: {"trustedKernelPublisher": True}}}))
    log = open(work / "server.log", "wb")
    proc = subprocess.Popen([str(kernelhub), "serve", "--root", str(work / "root"), "--port", "0", "--tokens",
                             str(work / "tokens.json"), "--log-requests"], stdout=subprocess.PIPE, stderr=log, text=True)
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("server did not start: " + (work / "server.log").read_text(errors="replace"))
        m = re.search(r"listening on (\S+) \(storage", line)
        if m:
            return proc, m.group(1)


def copy_variant(variant: Path, into: Path, marker: str | None = None) -> Path:
    """Copies a built variant directory to into/<its name>; `marker` makes it a changed build (a
    comment appended to layers.py, metadata.json's digest, which no longer holds, dropped).
    Returns `into`, a build folder for hub-publish."""
    dst = into / variant.name
    shutil.copytree(variant, dst, ignore=shutil.ignore_patterns("__pycache__"))
    if marker:
        with open(dst / "layers.py", "a") as f:
            f.write(f"\n# {marker}\n")
        meta = json.loads((dst / "metadata.json").read_text())
        meta.pop("digest", None)
        (dst / "metadata.json").write_text(json.dumps(meta))
    return into
