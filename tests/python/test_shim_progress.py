"""The shim looks like its peers: a download shows huggingface_hub's progress bar (the bytes come
in inside the C++ core, which reports them to Python), the switches that turn huggingface_hub's
bars off turn ours off, and the warnings kernels logs on a load are logged under the same logger
names and in the same words.

Each configuration runs in a child interpreter (huggingface_hub reads HF_HUB_DISABLE_PROGRESS_BARS
at import); TQDM_POSITION=-1 makes huggingface_hub draw bars on a stderr that is no terminal.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from shim_support import PACKAGE_DIR, child_env, cpu_variant_dir, publish, require_shim

REPO = "acme/progress-kernels"
INSTALL = "import kernelhub, sys; print(kernelhub.install_kernel(sys.argv[1], version=1))"


@pytest.fixture(scope="module")
def published(hub_server):
    require_shim()
    publish(hub_server, REPO)
    return hub_server


def install(server, cache: Path, **env: str) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-c", INSTALL, REPO], capture_output=True, text=True, timeout=300,
                            env=child_env(server, cache, **env))
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def test_a_download_draws_huggingface_hubs_bar(published, tmp_path):
    size = sum(f.stat().st_size for f in cpu_variant_dir().rglob("*") if f.is_file() and "__pycache__" not in f.parts)
    result = install(published, tmp_path / "cache", TQDM_POSITION="-1")
    final = result.stderr.replace("\r", "\n").strip().splitlines()
    bar = [line for line in final if REPO in line and "100%" in line]
    assert bar, result.stderr[-2000:]
    # tqdm's unit_scale text of the whole download: "34.6k/34.6k" (decimal units, as huggingface_hub's bars)
    assert "files)" in bar[-1] and "/" in bar[-1], bar[-1]
    assert f"{size / 1000:.1f}k" in bar[-1] or f"{size / 1e6:.2f}M" in bar[-1] or f"{size / 1e6:.1f}M" in bar[-1], \
        (size, bar[-1])

    # Cached: nothing is downloaded, no bar.
    again = install(published, tmp_path / "cache", TQDM_POSITION="-1")
    assert REPO not in again.stderr, again.stderr[-2000:]


@pytest.mark.parametrize("switch", ["env", "function"])
def test_huggingface_hubs_switches_turn_it_off(published, tmp_path, switch):
    if switch == "env":
        result = install(published, tmp_path / "cache", TQDM_POSITION="-1", HF_HUB_DISABLE_PROGRESS_BARS="1")
    else:
        code = ("from huggingface_hub.utils import disable_progress_bars; "
                "disable_progress_bars('huggingface_hub.snapshot_download'); " + INSTALL)
        result = subprocess.run([sys.executable, "-c", code, REPO], capture_output=True, text=True, timeout=300,
                                env=child_env(published, tmp_path / "cache", TQDM_POSITION="-1"))
        assert result.returncode == 0, result.stderr[-3000:]
    assert REPO not in result.stderr and "%|" not in result.stderr, result.stderr[-2000:]
    assert (tmp_path / "cache").exists()  # it did download


def test_a_retry_is_logged_as_huggingface_hub_logs_its_resumes(kernelhub_serve, tmp_path):
    require_shim()
    library = max(cpu_variant_dir().rglob("*.so"), key=lambda f: f.stat().st_size)
    server = kernelhub_serve("--fault-cut-after", str(library.stat().st_size // 2))  # each LFS object, once
    publish(server, REPO)
    result = install(server, tmp_path / "cache", HF_HUB_DISABLE_PROGRESS_BARS="1")
    path = f"build/{cpu_variant_dir().name}/{library.relative_to(cpu_variant_dir()).as_posix()}"
    assert f"kernelhub: retrying `{path}` in 1.0 s (retry 1 of 5): " in result.stderr, result.stderr[-2000:]


def test_no_bar_on_a_stderr_that_is_no_terminal(published, tmp_path):
    result = install(published, tmp_path / "cache")  # as huggingface_hub: tqdm decides from the stream
    assert "%|" not in result.stderr, result.stderr[-2000:]


def variant_with_metadata(tmp_path: Path, **changes) -> Path:
    """A copy of the reference CPU variant whose metadata.json lacks `drop` and has `changes`."""
    repo = tmp_path / "repo"
    variant = repo / "build" / cpu_variant_dir().name
    shutil.copytree(cpu_variant_dir(), variant, ignore=shutil.ignore_patterns("__pycache__"))
    metadata = json.loads((variant / "metadata.json").read_text())
    for key, value in changes.items():
        if value is None:
            metadata.pop(key, None)
        else:
            metadata[key] = value
    (variant / "metadata.json").write_text(json.dumps(metadata))
    return repo


# Loads a directory in a child interpreter (each copy of the variant registers the same op
# namespace with torch, once a process) and prints what was logged under kernels' names, with
# the file each record points at.
LOAD_LOGGED = """
import json, logging, sys
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append([record.name, record.levelname, record.getMessage(), record.pathname])
logging.getLogger("kernels").addHandler(Keep())
import kernelhub
kernelhub.get_local_kernel(sys.argv[1])
print(json.dumps(records))
"""


def logged(repo: Path) -> list[list[str]]:
    require_shim()
    script = repo.parent / "load.py"
    script.write_text(LOAD_LOGGED)
    result = subprocess.run([sys.executable, str(script), str(repo)], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONPATH": str(PACKAGE_DIR)})
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_kernels_warnings_go_through_logging_under_its_logger_names(tmp_path):
    from kernels._internals.digest import DigestVerificationResult

    metadata = json.loads((cpu_variant_dir() / "metadata.json").read_text())
    kernel = f"Kernel '{metadata['name']}' variant '{cpu_variant_dir().name}'"
    records = logged(variant_with_metadata(tmp_path / "a", digest=None, provenance=None))
    assert [r[:3] for r in records] == [
        ["kernels._internals.validate", "WARNING", f"{kernel}: {DigestVerificationResult.DigestMissing()}"]]
    assert Path(records[0][3]).name == "load.py"  # the record points at the caller, as kernels' stacklevel does

    provenance = {"kernel-builder": {"version": "0.13.0", "commit": "a" * 40, "dirty": True},
                  "kernel": {"commit": "b" * 40, "dirty": True}}
    dirty, missing = logged(variant_with_metadata(tmp_path / "b", digest=None, provenance=provenance))
    assert dirty[:2] == ["kernels._internals.validate", "WARNING"]
    assert dirty[2].startswith(f"{kernel} was built from a dirty git tree (kernel source, kernel-builder had "
                               "uncommitted changes)"), dirty[2]
    assert missing[2].endswith("integrity cannot be verified")

    # A digest and no dirty tree: nothing to say.
    assert logged(variant_with_metadata(tmp_path / "c", provenance=None)) == []
