"""The Nix build matrix (nix/) is kernel-builder's. Debian's nix-bin evaluates, offline, both
nix/matrix.nix and kernel-builder's own variant selection (its nix-builder/ code from
<repo>/../shared/vendor, README.md there) for the reference kernels and for build.toml files that
exercise every rule matrix.nix mirrors; the two must name the same variants on every system. Every
name parses with our resolver (`kernelhub variants`) and with the `kernels` package's parser into
the torch, backend and system of its matrix entry. The variants our CMake build makes are either in
the matrix or, for a torch the matrix does not know (the environment's), local builds only.
flake.nix parses."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
KERNELHUB = BUILD / "bin" / "kernelhub"
VENDOR = ROOT.parent / "shared" / "vendor"
SYSTEMS = ["x86_64-linux", "aarch64-linux", "aarch64-darwin"]

pytestmark = pytest.mark.skipif(shutil.which("nix-instantiate") is None,
                                reason="nix-instantiate is not installed (scripts/bootstrap.sh installs nix-bin)")


def nix_eval(path: Path, attr: str | None, *args: str, env: dict | None = None):
    r = subprocess.run(["nix-instantiate", "--eval", "--strict", "--json", str(path), *(["-A", attr] if attr else []),
                        *args], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, NIX_PATH="", **(env or {})))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def matrix(attr: str, build_toml: Path | None = None, *args: str):
    toml = ["--arg", "buildToml", str(build_toml)] if build_toml else []
    return nix_eval(ROOT / "nix" / "matrix.nix", attr, *toml, *args)


@pytest.fixture(scope="module")
def kernel_builder(tmp_path_factory):
    """kernel_builder(kernel_dir) -> {system: [variant]}: what kernel-builder's Nix matrix builds."""
    if not VENDOR.is_dir():
        pytest.skip(f"{VENDOR} is absent: it holds kernel-builder's nix-builder/ code, the reference this test "
                    "compares nix/matrix.nix with (a checkout needs shared/ beside it, as CI has)")
    unpacked = tmp_path_factory.mktemp("kernel-builder")
    for pattern in ("kernel-builder-nix-*.tar.gz", "nixpkgs-lib-*.tar.gz"):
        (tarball,) = VENDOR.glob(pattern)
        subprocess.run(["tar", "-xzf", str(tarball), "-C", str(unpacked)], check=True, timeout=120)

    def variants(kernel_dir: Path) -> dict:
        return nix_eval(VENDOR / "kernel-builder-variants.nix", None,
                        "--arg", "kb", str(unpacked / "kernel-builder-nix"),
                        "--arg", "lib", str(unpacked / "nixpkgs-lib" / "lib"), "--arg", "kernelDir", str(kernel_dir),
                        env={"NIX_REMOTE": f"local?root={unpacked}/store"})

    return variants


def by_system(answer: dict) -> dict:
    return {system: sorted(answer.get(system, [])) for system in SYSTEMS}


def kernel_dir(tmp_path: Path, build_toml: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "build.toml").write_text(build_toml)
    return tmp_path


def kernels_for(*backends: str) -> str:
    return "".join(f'\n[kernel.k_{b}]\nbackend = "{b}"\nsrc = ["k.cpp"]\n' for b in backends)


def general(*backends: str, extra: str = "") -> str:
    listed = ", ".join(f'"{b}"' for b in backends)
    return (f'[general]\nname = "k"\nversion = 1\nedition = 5\nlicense = "MIT"\nbackends = [{listed}]\n{extra}'
            '\n[torch]\nsrc = ["t.cpp"]\n')


def tvm_ffi_general(*backends: str, extra: str = "") -> str:
    listed = ", ".join(f'"{b}"' for b in backends)
    return (f'[general]\nname = "k"\nversion = 1\nedition = 5\nlicense = "MIT"\nbackends = [{listed}]\n{extra}'
            '\n[tvm-ffi]\nsrc = ["t.cpp"]\n')


ALL_BACKENDS = ("cpu", "cuda", "rocm", "xpu", "metal", "tpu")
BUILD_TOMLS = {
    "every backend compiled": general(*ALL_BACKENDS) + kernels_for(*ALL_BACKENDS),
    "torch and CUDA bounds": general("cpu", "cuda", extra='\n[general.cuda]\nminver = "13.0"\n')
    .replace('[torch]\n', '[torch]\nminver = "2.12"\nmaxver = "2.12"\n') + kernels_for("cpu", "cuda"),
    "a backend without compiled code": general("cpu", "cuda", "rocm") + kernels_for("cpu"),
    "a tvm-ffi kernel of every backend": tvm_ffi_general(*ALL_BACKENDS) + kernels_for(*ALL_BACKENDS),
    "a tvm-ffi kernel with CUDA bounds": tvm_ffi_general("cpu", "cuda", extra='\n[general.cuda]\nmaxver = "13.0"\n')
    + kernels_for("cuda"),
}


def test_matrix_is_kernel_builders_for_the_reference_kernels(kernel_builder):
    ours = by_system(matrix("bySystem"))
    assert ours == by_system(kernel_builder(ROOT / "kernels"))
    assert all(ours.values())  # every system builds something: a comparison of empty lists proves nothing


def test_matrix_is_kernel_builders_for_the_tvm_ffi_reference_kernels(kernel_builder):
    ours = by_system(matrix("bySystem", ROOT / "kernels" / "tvm-ffi" / "build.toml"))
    assert ours == by_system(kernel_builder(ROOT / "kernels" / "tvm-ffi"))
    assert "tvm-ffi01-cu130-x86_64-linux" in ours["x86_64-linux"]


@pytest.mark.parametrize("case", BUILD_TOMLS)
def test_matrix_is_kernel_builders_for_other_build_tomls(kernel_builder, tmp_path, case):
    kernel = kernel_dir(tmp_path, BUILD_TOMLS[case])
    theirs = by_system(kernel_builder(kernel))
    assert by_system(matrix("bySystem", kernel / "build.toml")) == theirs
    assert any(theirs.values())


def test_matrix_follows_build_toml_backends():
    names = matrix("names")
    assert names and all("-cu" in n or "-cpu-" in n for n in names)  # build.toml: cpu, cuda
    assert len(names) == len(set(names))
    assert set(matrix("names", None, "--arg", "backends", '["cpu"]')) < set(names)


def all_backend_variants(tmp_path: Path) -> list:
    kernel = kernel_dir(tmp_path, BUILD_TOMLS["every backend compiled"])
    return matrix("variants", kernel / "build.toml")


def test_every_variant_parses_like_kernel_builder_names_it(tmp_path):
    from kernels._internals.variants import parse_variant  # kernels 0.19

    kinds = {"cpu": "CPU", "cuda": "CUDA", "rocm": "ROCm", "xpu": "XPU", "metal": "Metal", "tpu": "TPU"}
    variants = all_backend_variants(tmp_path)
    assert {v["backend"] for v in variants} == set(kinds)
    for v in variants:
        parsed = parse_variant(v["name"])
        assert parsed.variant_str == v["name"]
        assert str(parsed.framework.version) == v["torch"]
        cpu, os_name = v["system"].split("-")
        assert (parsed.system.platform, parsed.system.os) == (cpu, os_name)
        assert parsed.framework.cxx11_abi is (True if os_name == "linux" else None)
        backend = parsed.backend
        assert type(backend).__name__ == kinds[v["backend"]]
        if v["version"] is not None:  # the toolkit's major.minor: xpu 2025.3.2 is xpu20253
            assert str(backend.version) == ".".join(v["version"].split(".")[:2])


def test_every_variant_parses_with_our_resolver(tmp_path):
    if not KERNELHUB.exists():
        pytest.skip(f"{KERNELHUB} is not built")
    names = [v["name"] for v in all_backend_variants(tmp_path / "kernel")]
    for name in names:
        (tmp_path / "build" / name).mkdir(parents=True)
    r = subprocess.run([str(KERNELHUB), "variants", str(tmp_path), "--json"], capture_output=True, text=True,
                       timeout=120)
    decisions = json.loads(r.stdout)["decisions"]
    assert sorted(d["variant"] for d in decisions) == sorted(names)
    for d in decisions:
        assert "not a build variant name" not in d["reason"], d


def test_variants_built_here_are_in_the_matrix_or_local_builds_of_this_torch():
    built = BUILD / "kernels" / "build"
    if not built.is_dir():
        pytest.skip(f"{built} is not built")
    from importlib.metadata import version

    from kernels._internals.variants import parse_variant  # kernels 0.19

    names = set(matrix("names"))
    tvm_ffi_names = set(matrix("names", ROOT / "kernels" / "tvm-ffi" / "build.toml"))
    matrix_torches = {v["torch"] for v in matrix("variants")}
    here = ".".join(version("torch").split(".")[:2])  # without importing torch (seconds)
    for variant in sorted(built.iterdir()):
        if variant.name.startswith("tvm-ffi"):
            # No torch in its name: the tvm-ffi build's variants are all in kernel-builder's tvm-ffi matrix.
            assert variant.name in tvm_ffi_names, f"{variant.name} is built by CMake but the tvm-ffi matrix lacks it"
            continue
        parsed = parse_variant(variant.name)
        torch_version = str(parsed.framework.version)
        if torch_version in matrix_torches:
            assert variant.name in names, f"{variant.name} is built by CMake but kernel-builder's matrix lacks it"
        else:
            # A local build only (nix/README.md): the environment's torch, which the matrix does not know.
            assert torch_version == here, f"{variant.name}: built for torch {torch_version}, the environment has {here}"
            assert re.fullmatch(r"torch\d+-cxx11-(cpu|cu\d+)-x86_64-linux|torch\d+-cxx11-(cpu|cu\d+)-aarch64-linux",
                                variant.name), variant.name


def test_flake_parses():
    r = subprocess.run(["nix-instantiate", "--parse", str(ROOT / "flake.nix")], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert "genKernelFlakeOutputs" in r.stdout
