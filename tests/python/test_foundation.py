"""Foundation checks driven through the CLI and the real `kernels` package."""

import glob
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from kernels_releases import RELEASES, kernels_env

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
KERNELHUB = BUILD / "bin" / "kernelhub"
KERNELS_DIR = BUILD / "kernels"
REPO = "kernelhub/reference-kernels"


def run(*args, env=None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([str(KERNELHUB), *args], capture_output=True, text=True, env=full_env, timeout=120)


def cpu_variant_dir() -> Path:
    dirs = glob.glob(str(KERNELS_DIR / "build" / "torch*-cpu-*"))
    assert len(dirs) == 1, dirs
    return Path(dirs[0])


def test_env_json_has_every_field():
    result = run("env", "--json")
    assert result.returncode == 0, result.stderr
    env = json.loads(result.stdout)
    for field in ("os", "cpu", "glibc", "torch", "cxx11_abi", "torch_cuda", "cuda_driver", "gpus", "variant"):
        assert field in env, field
    assert env["os"] == "linux"
    assert env["torch"] == ".".join(torch.__version__.split(".")[:2])
    assert env["cxx11_abi"] == torch.compiled_with_cxx11_abi()
    assert env["torch_cuda"] == torch.version.cuda
    if env["cuda_driver"] is None:  # this machine and CI: no GPU
        assert env["gpus"] == []
        major, minor = torch.__version__.split(".")[:2]
        assert env["variant"] == f"torch{major}{minor}-cxx11-cpu-x86_64-linux"


def test_env_overrides_describe_another_machine():
    result = run("env", "--json", env={"KERNELHUB_GPUS": "9.0,8.0", "KERNELHUB_CUDA_DRIVER": "13.0",
                                       "KERNELHUB_BACKEND": "cuda12.8", "KERNELHUB_TORCH": "2.13"})
    env = json.loads(result.stdout)
    assert env["gpus"] == [{"compute_capability": "9.0"}, {"compute_capability": "8.0"}]
    assert env["variant"] == "torch213-cxx11-cu128-x86_64-linux"


def test_get_local_kernel_lists_ops_and_variant():
    result = run("get", REPO, "--json", env={"LOCAL_KERNELS": f"{REPO}={KERNELS_DIR}"})
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    assert got["variant"] == cpu_variant_dir().name
    assert "rms_norm" in [op["name"] for op in got["ops"]]
    assert got["namespace"] == json.loads((cpu_variant_dir() / "metadata.json").read_text())["id"]


@pytest.mark.parametrize(
    "local_kernels, needle, status",
    [
        (f"{REPO}=/nonexistent/path", "does not exist", 3),  # not found (docs/CLI.md)
        (f"{REPO}=/tmp", "Could not find kernel", 3),
        ("kernelhub/reference-kernels", "malformed", 2),  # bad usage: a setting that does not parse
        ("not a repo=/tmp", "not a valid repo id", 2),
    ],
)
def test_get_bad_input_is_one_clear_line_and_nonzero(local_kernels, needle, status):
    result = run("get", REPO, env={"LOCAL_KERNELS": local_kernels})
    assert result.returncode == status
    assert needle in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr and "terminate" not in result.stderr


def test_get_so_that_is_not_elf(tmp_path):
    variant = tmp_path / "build" / cpu_variant_dir().name
    variant.mkdir(parents=True)
    meta = json.loads((cpu_variant_dir() / "metadata.json").read_text())
    (variant / f"{meta['id']}.abi3.so").write_text("not a library")
    (variant / "_ops.py").write_text((cpu_variant_dir() / "_ops.py").read_text())
    result = run("get", REPO, env={"LOCAL_KERNELS": f"{REPO}={tmp_path}"})
    assert result.returncode == 9  # a file that is not what it should be (docs/CLI.md)
    assert "ELF magic" in result.stderr


def test_cli_conventions():
    assert run("--help").returncode == 0
    assert "usage: kernelhub" in run("--help").stdout
    assert run("--version").stdout.startswith("kernelhub ")
    assert run("no-such-command").returncode == 2
    assert run("get").returncode == 2
    assert run("get", "--help").returncode == 0


def test_our_digest_is_the_kernels_package_digest():
    from kernels._rust import Digest, DigestAlgorithm

    variant = cpu_variant_dir()
    theirs = Digest.hash_variant(DigestAlgorithm.SHA256, variant).files
    ours = json.loads((variant / "metadata.json").read_text())["digest"]["files"]
    assert ours == theirs


@pytest.mark.parametrize("release", RELEASES)
def test_kernels_package_loads_our_variant_and_the_op_matches_float64(release):
    # The real `kernels` package (today's, and the one users of older releases run), in a fresh
    # interpreter, loads what our CMake build produced.
    code = f"""
import torch, kernels
from pathlib import Path
k = kernels.get_local_kernel(Path({str(KERNELS_DIR)!r}), backend="cpu")
for dtype, tol in ((torch.float32, 1e-5), (torch.bfloat16, 1e-2)):
    x = torch.randn(33, 4097).to(dtype)
    w = torch.randn(4097).to(dtype)
    out = torch.full_like(x, float("nan"))
    k.rms_norm(x, w, 1e-6, out=out)
    x64 = x.double()
    ref = x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + 1e-6) * w.double()
    rel = ((out.double() - ref).norm() / ref.norm()).item()
    assert rel < tol, (dtype, rel)
print(k.__name__)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                            env=kernels_env(os.environ, release))
    assert result.returncode == 0, result.stderr
    meta = json.loads((cpu_variant_dir() / "metadata.json").read_text())
    assert result.stdout.strip() == meta["id"]
