"""The `kernels` releases the tests hold kernelhub to, each in a child interpreter.

- 0.19.1 (requirements-dev.txt): the environment's, the reference for Hub behaviour and the API.
- 0.17.2: what users of older releases run, installed apart by scripts/bootstrap.sh in
  .venv/oracles/kernels-0.17.2 (KERNELHUB_KERNELS_0172_DIR elsewhere); a child with that folder
  first on PYTHONPATH imports it instead (its dependencies are the environment's).

`kernels_env(env, release)` is the environment for such a child; `kernels_cli(release)` the
command line of that release's CLI. Both skip the test, saying why, when the release is missing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CURRENT = "0.19.1"
OLDER = "0.17.2"
RELEASES = (CURRENT, OLDER)
_FOLDERS = {OLDER: Path(os.environ.get("KERNELHUB_KERNELS_0172_DIR", ROOT / ".venv" / "oracles" / "kernels-0.17.2"))}
# Each release's CLI entry point (kernels moved its code under kernels._internals in 0.19).
_CLI_MODULES = {CURRENT: "kernels._internals.cli", OLDER: "kernels.cli"}


def _version_in(env: dict) -> str:
    code = "import importlib.metadata as m, kernels; print(m.version('kernels'), kernels.__file__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    return out.stdout.split()[0] if out.returncode == 0 and out.stdout.strip() else ""


_checked: dict[str, bool] = {}


def kernels_env(env: dict, release: str = CURRENT) -> dict:
    """`env` for a child interpreter that imports kernels `release`."""
    env = dict(env)
    if release in _FOLDERS:
        folder = _FOLDERS[release]
        if not (folder / "kernels").is_dir():
            pytest.skip(f"kernels {release} is not installed in {folder} (scripts/bootstrap.sh installs it)")
        env["PYTHONPATH"] = os.pathsep.join([str(folder), *filter(None, [env.get("PYTHONPATH")])])
    if release not in _checked:  # once per release and test session: the child imports what it should
        found = _version_in(env)
        if found != release:
            pytest.skip(f"a child interpreter imports kernels {found or 'nothing'}, not {release}")
        _checked[release] = True
    return env


def kernels_cli(release: str = CURRENT) -> list[str]:
    """The command line of kernels `release`'s CLI (run it with kernels_env(env, release))."""
    return [sys.executable, "-c", f"import sys; from {_CLI_MODULES[release]} import main; sys.exit(main())"]
