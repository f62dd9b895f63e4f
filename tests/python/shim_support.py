"""Helpers for the Python shim tests (test_shim_*.py): the kernelhub package from the build,
publishing the reference kernel to a `kernelhub serve`, and running a snippet in a child process
that talks to that server (huggingface_hub reads HF_ENDPOINT and HF_HUB_OFFLINE once, at import,
so every configuration gets a fresh interpreter)."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, HfApi

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
# Where the kernelhub package under test is: the build's (<build>/python), or an installed wheel's
# site directory (scripts/test_wheel.sh sets KERNELHUB_PACKAGE_DIR).
PACKAGE_DIR = Path(os.environ.get("KERNELHUB_PACKAGE_DIR", BUILD / "python"))


def require_shim() -> None:
    """Skips (with the reason) when the binding has not been built."""
    if not list((PACKAGE_DIR / "kernelhub").glob("_core*.so")):
        pytest.skip(f"kernelhub._core is not built under {PACKAGE_DIR} (build the kernelhub_python_core target)")
    if not list((BUILD / "kernels" / "build").glob("torch*-cpu-*")):
        pytest.skip("the reference kernels are not built (build the reference_kernels target)")


def import_shim():
    """The kernelhub package from the build, imported into this process (skips when not built)."""
    require_shim()
    if str(PACKAGE_DIR) not in sys.path:
        sys.path.insert(0, str(PACKAGE_DIR))
    import kernelhub

    assert Path(kernelhub.__file__).parent == PACKAGE_DIR / "kernelhub", (kernelhub.__file__, PACKAGE_DIR)
    return kernelhub


def cpu_variant_dir() -> Path:
    dirs = glob.glob(str(BUILD / "kernels" / "build" / "torch*-cpu-*"))
    assert len(dirs) == 1, dirs
    return Path(dirs[0])


def publish(server, repo_id: str, version: int = 1, variant_name: str | None = None,
            variant: Path | None = None) -> str:
    """Uploads a variant directory (default: the built CPU variant of the reference kernels) as
    branch v<version> of `repo_id`, under `variant_name` (default: its own name); returns the commit."""
    api = HfApi(endpoint=server.url, token=server.write_token)
    api.create_repo(repo_id, repo_type="kernel", exist_ok=True)
    api.create_branch(repo_id, repo_type="kernel", branch=f"v{version}", exist_ok=True)
    variant = variant or cpu_variant_dir()
    name = variant_name or variant.name
    ops = [CommitOperationAdd(path_in_repo=f"build/{name}/{f.relative_to(variant).as_posix()}", path_or_fileobj=str(f))
           for f in sorted(variant.rglob("*")) if f.is_file() and "__pycache__" not in f.parts]
    return api.create_commit(repo_id, repo_type="kernel", revision=f"v{version}", operations=ops,
                             commit_message="publish").oid


def child_env(server, cache: Path, offline: bool = False, **extra: str) -> dict:
    env = server.client_env(cache)
    env.pop("LOCAL_KERNELS", None)
    env.pop("HF_HUB_OFFLINE", None)
    env["PYTHONPATH"] = os.pathsep.join([str(PACKAGE_DIR), *filter(None, [os.environ.get("PYTHONPATH")])])
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    env.update(extra)
    return env


def run_json(script: str, env: dict, *args: str, timeout: int = 300) -> dict:
    """Runs `script` (which prints one JSON document last) in a child interpreter."""
    result = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env,
                            timeout=timeout)
    # Both ends of stderr: the error is at its start when a long listing (torch's dispatch keys) follows.
    stderr = result.stderr if len(result.stderr) <= 6000 else result.stderr[:3000] + "\n...\n" + result.stderr[-3000:]
    assert result.returncode == 0, result.stdout[-3000:] + stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def requests_in_log(server) -> int:
    return len([line for line in server.log().splitlines() if line.strip()])


def fresh(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path
