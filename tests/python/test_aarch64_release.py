"""The aarch64 release artifacts (scripts/release.sh with the aarch64 target, make dist / make wheel),
run under qemu: the CLI tarball's `kernelhub`, and the manylinux_2_28_aarch64 wheel's _core in an
aarch64 CPython 3.11. Their ELF files' symbol versions are checked where they are made
(tests/python/elf_requirements.py: glibc 2.28 at most, no libstdc++); here, that they run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from aarch64_support import ROOT, prefix, run_aarch64

DIST = Path(os.environ.get("KERNELHUB_DIST_DIR", ROOT / "dist"))
VERSION = re.search(r"project\(kernelhub VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
PYTHON_TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"


def artifact(pattern: str) -> Path:
    found = sorted(DIST.glob(pattern))
    if len(found) != 1:
        pytest.skip(f"need one {pattern} in {DIST} (make dist), found {found}")
    return found[0]


def test_the_cli_tarball_runs_on_aarch64(tmp_path):
    prefix()  # run from scripts/aarch64.sh test
    tarball = artifact(f"kernelhub-{VERSION}-aarch64-linux.tar.gz")
    with tarfile.open(tarball) as t:
        t.extractall(tmp_path, filter="data")
    kernelhub = tmp_path / f"kernelhub-{VERSION}-aarch64-linux" / "bin" / "kernelhub"
    r = run_aarch64(kernelhub, "--version")
    assert r.returncode == 0 and VERSION in r.stdout, r.stdout + r.stderr
    # It selects for the machine it finds itself on.
    for name in ("torch215-cxx11-cpu-x86_64-linux", "torch215-cxx11-cpu-aarch64-linux",
                 "torch-2.15-cxx11-cpu-cpython-3.9-abi3-aarch64-linux"):
        (tmp_path / "kernel" / "build" / name).mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KERNELHUB_")}
    env.update(KERNELHUB_TORCH="2.15.0+cpu", KERNELHUB_PYTHON="3.11", KERNELHUB_GPUS="", KERNELHUB_CUDA_DRIVER="none")
    r = run_aarch64(kernelhub, "variants", str(tmp_path / "kernel"), "--json", env=env)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["environment"]["cpu"] == "aarch64"
    assert got["chosen"] == "torch-2.15-cxx11-cpu-cpython-3.9-abi3-aarch64-linux"


def test_the_wheel_is_manylinux_2_28_aarch64_and_its_core_runs_in_an_aarch64_python(tmp_path):
    wheel = artifact(f"kernelhub-{VERSION}-{PYTHON_TAG}-{PYTHON_TAG}-manylinux_2_28_aarch64.whl")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(tmp_path / "site")
        wheel_tags = z.read(f"kernelhub-{VERSION}.dist-info/WHEEL").decode()
    assert f"Tag: {PYTHON_TAG}-{PYTHON_TAG}-manylinux_2_28_aarch64" in wheel_tags
    (core,) = (tmp_path / "site" / "kernelhub").glob("_core.*.so")
    assert core.name == f"_core.cpython-{sys.version_info.major}{sys.version_info.minor}-aarch64-linux-gnu.so"
    python = prefix() / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    # _core alone (the package's __init__ imports what an aarch64 environment would have installed
    # beside it): the machine it reports, and a metadata.json parsed by the C++ core.
    script = (
        "import importlib.util, json, sys\n"
        f"spec = importlib.util.spec_from_file_location('kernelhub._core', {str(core)!r})\n"
        "core = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(core)\n"
        "env = core.environment('cpu')\n"
        "meta = core.parse_metadata(json.dumps({'name': 'relu', 'id': '_relu_cpu_0000000', 'version': 1,"
        " 'license': 'Apache-2.0', 'python-depends': [], 'backend': {'type': 'cpu'}}))\n"
        "print(json.dumps({'env': {k: str(v) for k, v in dict(env).items()}, 'name': meta['name']}))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "KERNELHUB_"))}
    r = run_aarch64(python, "-c", script, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads(r.stdout)
    assert got["name"] == "relu"
    assert got["env"]["cpu"] == "aarch64", got
    # The x86_64 wheel's check of the same tag, by auditwheel, reads the aarch64 ELF files too.
    shown = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(wheel)], capture_output=True, text=True)
    assert shown.returncode == 0 and "manylinux_2_28_aarch64" in shown.stdout, shown.stdout + shown.stderr
