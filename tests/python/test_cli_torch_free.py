"""The torch-free CLI: `kernelhub` links no LibTorch and loads none; `kernelhub get`
runs `kernelhub-get` beside it, which does.

Checked three ways: `readelf -d` (the libraries each executable needs), LD_DEBUG=libs (every
library the dynamic linker initialises in a command's process, dlopen'ed ones included) and
/proc/<pid>/maps of a running `kernelhub serve`. The torch that download, variants and env select
for comes from --torch, KERNELHUB_TORCH or the Python environment's torch/version.py (never
imported); with none to be found, they select the builds kernelhub loads without torch (tvm-ffi),
and say so and which flag or variable names a torch.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from conftest import BUILD_DIR, KERNELHUB_BIN
from test_get_kernel_hub import cpu_variant_dir, publish

KERNELHUB_GET = BUILD_DIR / "bin" / "kernelhub-get"
REPO = "acme/reference-kernels"
TORCH_LIBRARY = re.compile(r"\blib(torch|c10)\w*\.so")

pytestmark = pytest.mark.skipif(not KERNELHUB_GET.exists(), reason=f"{KERNELHUB_GET} is not built")


def variant_torch() -> str:
    """The torch the reference kernels' CPU variant is built for: torch215-... → 2.15."""
    match = re.match(r"torch(\d)(\d+)-", cpu_variant_dir().name)
    return f"{match[1]}.{match[2]}"


def run(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([str(KERNELHUB_BIN), *args], env=env, capture_output=True, text=True, timeout=120)


def torch_loaded(*args: str, env: dict) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Runs the command under LD_DEBUG=libs; returns it and the torch libraries it initialised."""
    result = run(*args, env=dict(env, LD_DEBUG="libs"))
    initialised = re.findall(r"calling init: (\S+)", result.stderr)
    assert initialised, result.stderr[-2000:]  # the dynamic linker did report
    return result, [lib for lib in initialised if TORCH_LIBRARY.search(lib)]


def needed(executable: Path) -> list[str]:
    dynamic = subprocess.run(["readelf", "-d", str(executable)], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.+)\]", dynamic)


@pytest.fixture(scope="module")
def published(hub_server):
    hub_server.commit = publish(hub_server, REPO)
    return hub_server


def hub_env(server, tmp_path: Path) -> dict:
    """Talking to `server`, with its own cache; the published variant is a CPU one, so CPU
    variants are selected (also where a GPU is visible)."""
    env = server.client_env(tmp_path / "cache")
    env.update(HF_HOME=str(tmp_path / "hf-home"), KERNELHUB_BACKEND="cpu")
    env.pop("KERNELHUB_TORCH", None)
    return env


def offline_env(tmp_path: Path) -> dict:
    """This environment with its own cache, no Hub and no KERNELHUB_TORCH."""
    env = {k: v for k, v in os.environ.items() if k != "KERNELHUB_TORCH"}
    env.update(HF_HUB_CACHE=str(tmp_path / "cache"), HF_HOME=str(tmp_path / "hf-home"), HF_HUB_OFFLINE="1")
    return env


def test_kernelhub_needs_no_torch_library_and_kernelhub_get_does():
    assert needed(KERNELHUB_BIN) and not [lib for lib in needed(KERNELHUB_BIN) if TORCH_LIBRARY.search(lib)]
    assert {"libtorch_cpu.so", "libc10.so"} <= set(needed(KERNELHUB_GET))
    runpath = subprocess.run(["readelf", "-d", str(KERNELHUB_BIN)], capture_output=True, text=True).stdout
    assert "torch/lib" not in runpath


def test_commands_that_load_no_op_load_no_torch(published, tmp_path):
    env = hub_env(published, tmp_path)
    variant = cpu_variant_dir()
    signed = tmp_path / variant.name
    shutil.copytree(variant, signed, ignore=shutil.ignore_patterns("__pycache__"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "kernels.toml").write_text(f'[dependencies]\n"{REPO}" = 1\n')
    key = tmp_path / "publisher.key"
    commands = [
        ("download", REPO, "--version", "1", "--json"),
        ("download", REPO, "--version", "1", "--json"),  # cached: a revision check, no file
        ("variants", REPO, "--version", "1", "--json"),
        ("variants", str(BUILD_DIR / "kernels" / "build"), "--json"),
        ("lock", str(project), "--json"),
        ("keygen", "--out", str(key)),
        ("sign", str(signed), "--key", str(key)),
        ("verify", str(signed), "--repo", REPO, "--version", "1", "--key", f"{key}.pub"),
        ("env", "--json"),
        ("--help",),
    ]
    for command in commands:
        result, torch = torch_loaded(*command, env=env)
        assert result.returncode == 0, (command, result.stdout, result.stderr[-3000:])
        assert torch == [], command
    downloaded = json.loads(run("download", REPO, "--version", "1", "--json", env=env).stdout)
    assert downloaded["variants"] == [variant.name] and downloaded["downloaded_bytes"] == 0
    assert (project / "kernels.lock").exists()
    assert "signature OK" in run("verify", str(signed), "--repo", REPO, "--version", "1", "--key", f"{key}.pub",
                                 env=env).stdout


def test_a_running_server_maps_no_torch(published):
    maps = Path(f"/proc/{published.process.pid}/maps").read_text()
    assert str(KERNELHUB_BIN.resolve()) in maps  # the server's own mappings are there to read
    assert not TORCH_LIBRARY.search(maps), [line for line in maps.splitlines() if TORCH_LIBRARY.search(line)]


def test_get_runs_kernelhub_get_which_loads_torch(tmp_path):
    env = dict(offline_env(tmp_path), LOCAL_KERNELS=f"{REPO}={BUILD_DIR / 'kernels'}")
    result, torch = torch_loaded("get", REPO, "--json", env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "rms_norm" in [op["name"] for op in json.loads(result.stdout)["ops"]]
    assert any("libtorch_cpu.so" in lib for lib in torch)  # the check above would see a torch


def test_the_torch_comes_from_the_flag_the_variable_or_the_python_environment(tmp_path):
    env = offline_env(tmp_path)
    env["VIRTUAL_ENV"] = sys.prefix
    found = json.loads(run("env", "--json", env=env).stdout)
    assert found["torch"] == ".".join(metadata.version("torch").split(".")[:2])
    assert found["torch_source"] == f"{Path(sys.prefix) / 'lib'}/python{sys.version_info.major}.{sys.version_info.minor}" \
                                    f"/site-packages/torch (VIRTUAL_ENV)"

    flagged = json.loads(run("env", "--json", "--torch", "2.9.1+cu128", env=dict(env, KERNELHUB_TORCH="2.8")).stdout)
    assert (flagged["torch"], flagged["torch_cuda"], flagged["torch_source"]) == ("2.9", "12.8", "--torch")
    variable = json.loads(run("env", "--json", env=dict(env, KERNELHUB_TORCH="2.8")).stdout)
    assert (variable["torch"], variable["torch_backend"], variable["torch_source"]) == ("2.8", "cpu", "KERNELHUB_TORCH")

    # Only files are read: an environment with torch's version.py and no interpreter at all.
    venv = tmp_path / "venv"
    (venv / "lib" / "python3.12" / "site-packages" / "torch").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /nonexistent/bin\nversion = 3.12.4\n")
    (venv / "lib" / "python3.12" / "site-packages" / "torch" / "version.py").write_text(
        "__version__ = '2.10.0+rocm7.1'\ncuda: Optional[str] = None\nhip: Optional[str] = '7.1.25424-4179531dcd'\n")
    read = json.loads(run("env", "--json", env=dict(env, VIRTUAL_ENV=str(venv))).stdout)
    assert (read["torch"], read["torch_backend"], read["cxx11_abi"]) == ("2.10", "rocm7.1", True)


def test_with_no_torch_to_be_found_the_builds_kernelhub_loads_without_it_are_selected_and_said(published, tmp_path):
    env = hub_env(published, tmp_path)
    env.pop("VIRTUAL_ENV", None)
    env["PATH"] = str(tmp_path / "no-python")  # no python3 anywhere
    local = str(BUILD_DIR / "kernels" / "build")

    # The local build has torch and tvm-ffi builds: the tvm-ffi one, and a note that says why.
    result = run("variants", local, "--json", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    tvm_ffi_builds = sorted(p.name for p in (BUILD_DIR / "kernels" / "build").glob("tvm-ffi*-cpu-*"))
    assert json.loads(result.stdout)["chosen"] == (tvm_ffi_builds[0] if tvm_ffi_builds else None), result.stdout
    assert "no python3 on PATH" in result.stderr and "selecting the builds that load without torch" in result.stderr
    assert "--torch" in result.stderr, result.stderr

    # The published repo has a torch build only: none runs here without torch, and the closest
    # miss says it needs LibTorch.
    result = run("download", REPO, "--version", "1", "--json", env=env)
    assert result.returncode == 4, result.stdout + result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "no_compatible_variant" and "LibTorch" in error["message"], error
    assert "Give --torch SPEC to select for a torch" in result.stderr

    result = run("env", env=env)  # env describes the machine without a torch, and says why
    assert result.returncode == 0 and re.search(r"^torch:\s+null$", result.stdout, re.M), result.stdout
    assert "KERNELHUB_TORCH" in result.stderr

    result = run("variants", local, "--torch", "latest", env=env)
    assert result.returncode == 2 and "--torch: `latest` is not a torch version" in result.stderr

    # An image build stage without Python: the torch of the runtime image, given by hand.
    result = run("download", REPO, "--version", "1", "--torch", f"{variant_torch()}+cpu", "--json", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["variants"] == [cpu_variant_dir().name]
    project = tmp_path / "project"
    project.mkdir()
    (project / "kernels.toml").write_text(f'[dependencies]\n"{REPO}" = 1\n')
    assert run("lock", str(project), env=env).returncode == 0
    lockfile = str(project / "kernels.lock")
    result = run("download", "--lockfile", lockfile, "--json", env=dict(env, HF_HUB_CACHE=str(tmp_path / "stage")))
    assert result.returncode == 4 and "LibTorch" in json.loads(result.stdout)["error"]["message"], result.stdout
    assert "Give --torch SPEC" in result.stderr
    result = run("download", "--lockfile", lockfile, "--torch", f"{variant_torch()}+cpu", "--json",
                 env=dict(env, HF_HUB_CACHE=str(tmp_path / "stage")))
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["kernels"][0]["variants"] == [cpu_variant_dir().name]
    result = run("variants", local, "--json", env=dict(env, KERNELHUB_TORCH=variant_torch()))
    assert result.returncode == 0 and json.loads(result.stdout)["chosen"] == cpu_variant_dir().name
