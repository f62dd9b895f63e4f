"""The Nix build matrix (nix/), evaluated without network by Debian's nix-bin: every variant name it
yields parses with our resolver (`kernelhub variants`) and with the `kernels` package's parser
(which mirrors kernel-builder's naming) into the torch, backend and system of its matrix entry;
the variants CMake builds here are in it; flake.nix parses."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
KERNELHUB = BUILD / "bin" / "kernelhub"
ALL_BACKENDS = '["cpu" "cuda" "rocm" "xpu" "metal"]'

pytestmark = pytest.mark.skipif(shutil.which("nix-instantiate") is None,
                                reason="nix-instantiate is not installed (scripts/bootstrap.sh installs nix-bin)")


def nix_eval(attr: str, *args: str):
    r = subprocess.run(["nix-instantiate", "--eval", "--strict", "--json", str(ROOT / "nix" / "matrix.nix"),
                        "-A", attr, *args], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, NIX_PATH=""))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_matrix_follows_build_toml_backends():
    names = nix_eval("names")
    assert names and all("-cu" in n or "-cpu-" in n for n in names)  # build.toml: cpu, cuda
    assert len(names) == len(set(names))
    every = nix_eval("names", "--arg", "backends", ALL_BACKENDS)
    assert set(names) < set(every)
    assert any("-rocm71-" in n for n in every) and any("-metal-aarch64-darwin" in n for n in every)


def test_every_variant_parses_like_kernel_builder_names_it():
    from kernels.variants import parse_variant

    kinds = {"cpu": "CPU", "cuda": "CUDA", "rocm": "ROCm", "xpu": "XPU", "metal": "Metal"}
    for v in nix_eval("variants", "--arg", "backends", ALL_BACKENDS):
        parsed = parse_variant(v["name"])
        assert parsed.variant_str == v["name"]
        assert str(parsed.framework.version) == v["torch"]
        cpu, os_name = v["system"].split("-")
        assert (parsed.arch.platform, parsed.arch.os) == (cpu, os_name)
        assert parsed.framework.cxx11_abi is (True if os_name == "linux" else None)
        backend = parsed.arch.backend
        assert type(backend).__name__ == kinds[v["backend"]]
        if v["version"] is not None:
            assert str(backend.version) == v["version"]


def test_every_variant_parses_with_our_resolver(tmp_path):
    if not KERNELHUB.exists():
        pytest.skip(f"{KERNELHUB} is not built")
    names = nix_eval("names", "--arg", "backends", ALL_BACKENDS)
    for name in names:
        (tmp_path / "build" / name).mkdir(parents=True)
    r = subprocess.run([str(KERNELHUB), "variants", str(tmp_path), "--json"], capture_output=True, text=True,
                       timeout=120)
    decisions = json.loads(r.stdout)["decisions"]
    assert sorted(d["variant"] for d in decisions) == sorted(names)
    for d in decisions:
        assert "not a build variant name" not in d["reason"], d


def test_variants_built_here_are_in_the_matrix():
    built = BUILD / "kernels" / "build"
    if not built.is_dir():
        pytest.skip(f"{built} is not built")
    names = set(nix_eval("names"))
    for variant in built.iterdir():
        assert variant.name in names, f"{variant.name} is built by CMake but missing from nix/versions.nix"


def test_flake_parses():
    r = subprocess.run(["nix-instantiate", "--parse", str(ROOT / "flake.nix")], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert "genKernelFlakeOutputs" in r.stdout
