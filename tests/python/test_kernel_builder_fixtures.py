"""Kernels built the way kernel-builder builds them (tests/fixtures/kernel_builder: its templates'
layout, link flags and metadata, a classic TORCH_LIBRARY flavour and a Torch stable-ABI flavour)
load and run through every path we offer: C++ get_kernel (tests/kernelhub/kernel_builder_test.cpp
and the CLI here), the Python shim, and the real `kernels` package, from a directory and from a Hub
(`kernelhub serve`). kernels-data, kernel-builder's own metadata code, checks their metadata.json."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from shim_support import BUILD, child_env, publish, require_shim, run_json

FIXTURES = BUILD / "tests" / "fixtures" / "kernel_builder"
KERNELHUB = BUILD / "bin" / "kernelhub"
KERNELS = ["kb-activation", "kb-activation-stable"]


def cpu_variant(kernel: str) -> Path:
    dirs = sorted((FIXTURES / kernel / "build").glob("*-cpu-*"))
    if not dirs:
        pytest.skip(f"the kernel-builder fixtures are not built under {FIXTURES} (target kernel_builder_fixtures)")
    assert len(dirs) == 1, dirs
    return dirs[0]


def library(variant: Path) -> Path:
    (so,) = variant.glob("*.abi3.so")
    return so


def readelf(*args: str) -> str:
    return subprocess.run(["readelf", "-W", *args], capture_output=True, text=True, check=True).stdout


def without_library_path(env: dict) -> dict:
    env = dict(env)
    env.pop("LD_LIBRARY_PATH", None)
    env.pop("LOCAL_KERNELS", None)
    return env


@pytest.mark.parametrize("kernel", KERNELS)
def test_the_fixture_is_linked_as_kernel_builder_links(kernel):
    variant = cpu_variant(kernel)
    so = library(variant)
    dynamic = readelf("-d", str(so))
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
    import torch

    expected = {"libtorch.so", "libtorch_cpu.so", "libc10.so"}
    if torch.version.cuda:  # the CUDA pip torch: its CUDA half comes with the torch target
        expected |= {"libtorch_cuda.so", "libc10_cuda.so"}
    assert expected <= set(needed), needed
    assert "RUNPATH" not in dynamic and "RPATH" not in dynamic
    assert re.search(r"\(FLAGS(_1)?\)\s+.*\bNOW\b|BIND_NOW", dynamic), dynamic
    assert "GNU_RELRO" in readelf("-l", str(so))
    symbols = readelf("--dyn-syms", str(so))
    namespace = so.name.removesuffix(".abi3.so")
    assert re.search(rf"FUNC\s+GLOBAL\s+DEFAULT\s+\d+\s+PyInit_{namespace}$", symbols, re.M)
    assert re.search(r"UND PyModule_Create2$", symbols, re.M)
    undefined_cxx = re.findall(r"UND (_ZN(?:K)?(?:3c10|2at|5torch)\S*)", symbols)
    if kernel.endswith("-stable"):
        assert variant.name.startswith("torch-stable-abi"), variant.name
        assert undefined_cxx == [], undefined_cxx[:5]  # only the stable C ABI
        assert re.search(r"UND (aoti_torch_|torch_)\S+", symbols)
    else:
        assert re.match(r"torch\d+-cxx11-cpu-", variant.name), variant.name
        assert undefined_cxx


@pytest.mark.parametrize("kernel", KERNELS)
def test_kernels_data_accepts_the_metadata_and_agrees_on_the_digest(kernel):
    kernels_data = pytest.importorskip("kernels_data")
    variant = cpu_variant(kernel)
    raw = (variant / "metadata.json").read_bytes()
    metadata = kernels_data.Metadata.from_bytes(raw)
    assert metadata.id == library(variant).name.removesuffix(".abi3.so")
    assert str(metadata.name) == kernel
    doc = json.loads(raw)
    assert {"kernel-depends", "provenance", "digest"} <= doc.keys()
    recomputed = kernels_data.Digest.hash_variant(kernels_data.DigestAlgorithm.SHA256, str(variant))
    assert dict(recomputed.files) == doc["digest"]["files"]
    metadata.digest.validate(recomputed)


def test_the_cli_loads_both_from_a_directory_without_library_path(tmp_path):
    for kernel in KERNELS:
        variant = cpu_variant(kernel)
        env = without_library_path(os.environ)
        env["LOCAL_KERNELS"] = f"kernels-test/{kernel}={variant.parents[1]}"
        r = subprocess.run([str(KERNELHUB), "get", f"kernels-test/{kernel}", "--json"], capture_output=True,
                           text=True, env=env, cwd=tmp_path, timeout=120)
        assert r.returncode == 0, r.stderr
        got = json.loads(r.stdout)
        assert got["variant"] == variant.name
        schemas = {op["name"]: op["schema"] for op in got["ops"]}
        assert sorted(schemas) == ["fatrelu_and_mul", "gelu_tanh_and_mul", "scale_shift", "silu_and_mul"]
        assert schemas["silu_and_mul"].endswith("silu_and_mul(Tensor(a!) out, Tensor input) -> ()")


# One child interpreter a plan: it loads each (how, kernel) in turn and runs every op against float64
# torch on fresh random inputs (outputs poisoned, odd shapes), printing the worst relative error.
RUN_OPS = r"""
import json, sys, torch
from pathlib import Path
loader = sys.argv[1]
plan = json.loads(sys.argv[2])
if loader == "kernels":
    import kernels as api
else:
    import kernelhub as api

def rel(out, ref):
    # Relative to the reference's scale (float32 rounds values near zero to zero); NaN never passes.
    if not ref.numel():
        return 0.0
    err = float((out.double() - ref).abs().max() / ref.abs().max().clamp_min(1.0))
    return err if err == err else float("inf")

report = []
for how, target in plan:
    # On a CUDA torch without a GPU, both would pick the CUDA variant, as the kernels package does.
    module = (api.get_local_kernel(Path(target), backend="cpu") if how == "local"
              else api.get_kernel(target, version=1, backend="cpu"))
    worst = 0.0
    for shape in [(1, 2), (3, 14), (2, 5, 38), (7, 1026)]:
        x = torch.randn(shape) * 3
        d = shape[-1] // 2
        gate, up = x.double()[..., :d], x.double()[..., d:]
        out = torch.full((*shape[:-1], d), float("nan"))
        module.silu_and_mul(out, x)
        worst = max(worst, rel(out, gate * torch.sigmoid(gate) * up))
        out.fill_(float("nan"))
        module.gelu_tanh_and_mul(out, x)
        worst = max(worst, rel(out, torch.nn.functional.gelu(gate, approximate="tanh") * up))
        out.fill_(float("nan"))
        module.fatrelu_and_mul(out, x, 0.5)
        worst = max(worst, rel(out, torch.where(gate > 0.5, gate, 0.0) * up))
        shift = torch.randn(shape[-1])
        worst = max(worst, rel(module.scale_shift(x, shift, 0.25, 3), x.double() ** 3 * 0.25 + shift.double()))
    variant = module.__file__.split("/build/")[-1].split("/")[0] if "/build/" in module.__file__ else ""
    report.append({"target": target, "worst": worst, "variant": variant, "module": module.__name__})
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def published(hub_server):
    """The classic fixture as acme/kb-activation, and both flavours side by side in
    acme/kb-activation-both (where the stable-ABI variant is preferred, as kernels prefers it)."""
    publish(hub_server, "acme/kb-activation", variant=cpu_variant("kb-activation"))
    publish(hub_server, "acme/kb-activation-both", variant=cpu_variant("kb-activation"))
    publish(hub_server, "acme/kb-activation-both", variant=cpu_variant("kb-activation-stable"))
    return hub_server


@pytest.mark.parametrize("loader", ["kernels", "kernelhub"])
def test_python_loads_and_runs_both_flavours_from_a_directory_and_a_hub(loader, published, tmp_path):
    if loader == "kernelhub":
        require_shim()
    classic, stable = cpu_variant("kb-activation"), cpu_variant("kb-activation-stable")
    # Two processes: a namespace loads once per process, and each flavour must be seen both ways.
    plans = [
        [["local", str(classic.parents[1])], ["hub", "acme/kb-activation-both"]],
        [["hub", "acme/kb-activation"], ["local", str(stable.parents[1])]],
    ]
    for i, plan in enumerate(plans):
        env = without_library_path(child_env(published, tmp_path / f"cache-{i}"))
        report = run_json(RUN_OPS, env, loader, json.dumps(plan))
        assert len(report) == 2
        for entry in report:
            assert entry["worst"] < 1e-5, entry
        if i == 0:
            assert report[0]["module"] == json.loads((classic / "metadata.json").read_text())["id"]
            assert report[1]["variant"] == stable.name  # the stable-ABI variant is chosen over the classic one


def test_the_cli_loads_both_flavours_from_a_hub(published, tmp_path):
    for repo, variant in [("acme/kb-activation", cpu_variant("kb-activation")),
                          ("acme/kb-activation-both", cpu_variant("kb-activation-stable"))]:
        env = without_library_path(child_env(published, tmp_path / "cache"))
        r = subprocess.run([str(KERNELHUB), "get", repo, "--version", "1", "--json"], capture_output=True,
                           text=True, env=env, cwd=tmp_path, timeout=120)
        assert r.returncode == 0, r.stderr
        got = json.loads(r.stdout)
        assert got["variant"] == variant.name
        assert len(got["ops"]) == 4
