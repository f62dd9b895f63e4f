"""The Python package is a thin shim: every rule it answers with is the C++ core's, and the core
fits every torch.

- kernelhub._core links no torch library (readelf -d names none); the shim reads the imported
  torch as the `kernels` package reads it and the core decides what that text means.
- The rules the shim once kept a copy of give what kernels gives, asked of both in this process
  (kernels itself is the oracle): lock lookup, LOCAL_KERNELS, metadata.json's fields."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from shim_support import PACKAGE_DIR, cpu_variant_dir, import_shim, run_json

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def kernelhub():
    return import_shim()


def in_child(script: str, *args: str, **env: str) -> object:
    """Runs `script` (printing one JSON document) in a fresh interpreter that imports kernelhub from
    the package under test, so that what it imports leaves this process's modules alone."""
    return run_json(script, {**os.environ, "PYTHONPATH": str(PACKAGE_DIR), **env}, *args)


def test_core_needs_no_torch_library(kernelhub):
    (core,) = (PACKAGE_DIR / "kernelhub").glob("_core*.so")
    dynamic = subprocess.run(["readelf", "-d", str(core)], capture_output=True, text=True, check=True).stdout
    needed = [line.split("[")[1].split("]")[0] for line in dynamic.splitlines() if "(NEEDED)" in line]
    # The parse found the list: libc always (the build's _core also needs libcurl; the wheel's has it inside).
    assert "libc.so.6" in needed, needed
    assert not [name for name in needed if name.startswith(("libtorch", "libc10"))], needed


@pytest.mark.parametrize(
    "torch, expected",
    [
        ({"version": "2.9.0+cu128", "cxx11_abi": True, "cuda": "12.8"}, ("2.9", True, "cuda12.8")),
        ({"version": "2.8.0+rocm6.4", "cxx11_abi": True, "hip": "6.4.43482-0f2d60242"}, ("2.8", True, "rocm6.4")),
        ({"version": "2.9.1+xpu", "cxx11_abi": True, "xpu": "20250100"}, ("2.9", True, "xpu2025.1")),
        ({"version": "2.10.0a0+git1234", "cxx11_abi": False}, ("2.10", False, "cpu")),
        ({}, ("", None, "cpu")),  # no torch in the process
    ],
)
def test_the_core_reads_torch_as_kernels_does(kernelhub, monkeypatch, torch, expected):
    from kernelhub import _core

    for name in ("KERNELHUB_TORCH", "KERNELHUB_CXX11_ABI", "KERNELHUB_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    got = _core.environment(torch=_core.TorchRuntime(**torch))
    assert (got["torch"], got["cxx11_abi"], got["torch_backend"]) == expected


@pytest.mark.parametrize("torch, attribute", [({"version": "nightly"}, "torch.__version__"),
                                               ({"version": "2.9.0", "cuda": "twelve"}, "torch.version.cuda"),
                                               ({"version": "2.9.0", "xpu": "2025"}, "torch.version.xpu")])
def test_torch_text_that_does_not_parse_is_named(kernelhub, torch, attribute):
    from kernelhub import _core

    with pytest.raises(_core.CoreError) as raised:
        _core.TorchRuntime(**torch)
    code, message, _ = raised.value.args
    assert code == "invalid_argument" and attribute in message


def test_the_shim_passes_the_imported_torch(kernelhub, monkeypatch):
    import torch
    from kernelhub import _core, _load

    for name in ("KERNELHUB_TORCH", "KERNELHUB_CXX11_ABI", "KERNELHUB_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    got = _core.environment(torch=_load._torch())
    assert got["torch"] == ".".join(torch.__version__.split(".")[:2])
    assert got["cxx11_abi"] == torch.compiled_with_cxx11_abi()
    assert got["torch_backend"] == (f"cuda{torch.version.cuda}" if torch.version.cuda else "cpu")
    # The reference kernels are built for this torch, and named as kernel-builder names them.
    assert _core.environment(backend="cpu", torch=_load._torch())["native_variant"] == cpu_variant_dir().name


def write_locks(path: Path) -> Path:
    path.write_text(json.dumps([
        {"dependency": {"repo-id": "acme/current", "version": 1}, "lock": {"commit": COMMIT}},
    ]))
    return path


def test_lock_lookup_is_the_kernels_packages(kernelhub, tmp_path):
    locking = pytest.importorskip("kernels.locking")
    from kernelhub import _load, errors

    lock = write_locks(tmp_path / "kernels.lock")
    _, dependency = locking.get_locked_kernel_revision("acme/current", lock)
    assert dependency.repo_id == "acme/current"
    assert _load.locked_commit("acme/current", lock) == COMMIT
    legacy = tmp_path / "legacy" / "kernels.lock"
    legacy.parent.mkdir()
    legacy.write_text(json.dumps([{"repo_id": "acme/legacy", "sha": COMMIT, "variants": {}}]))
    assert _load.locked_commit("acme/legacy", legacy) == COMMIT
    # A repo the lock does not list: kernels' ValueError, word for word, and a typed not-found.
    with pytest.raises(ValueError) as theirs:
        locking.get_locked_kernel_revision("acme/unlocked", lock)
    with pytest.raises(errors.NotLockedError) as ours:
        _load.locked_commit("acme/unlocked", lock)
    assert str(ours.value) == str(theirs.value) and isinstance(ours.value, ValueError)
    # Text that is no lock file is refused before anything is looked up.
    (tmp_path / "bad.lock").write_text("{not json")
    with pytest.raises(errors.CorruptFileError):
        _load.locked_commit("acme/current", tmp_path / "bad.lock")


def test_local_kernels_is_read_by_the_core(kernelhub, monkeypatch):
    load = pytest.importorskip("kernels.load")
    local = cpu_variant_dir().parent.parent
    monkeypatch.setenv("LOCAL_KERNELS", f"acme/elsewhere=/nonexistent:acme/here={local}")
    assert kernelhub.has_kernel("acme/here", version=1, backend="cpu")
    assert not kernelhub.has_kernel("acme/elsewhere", version=1, backend="cpu")  # the directory is missing
    script = ("import json, kernelhub\n"
              "print(json.dumps(kernelhub.get_kernel('acme/here', version=1, backend='cpu').__file__))")
    assert Path(in_child(script, LOCAL_KERNELS=os.environ["LOCAL_KERNELS"])).parent == cpu_variant_dir()
    for malformed in ("no-equals-sign", f"acme/here={local}:also-no-equals"):
        load._parse_local_kernel_overrides.cache_clear()
        with pytest.raises(ValueError) as theirs:
            load._parse_local_kernel_overrides(malformed)
        monkeypatch.setenv("LOCAL_KERNELS", malformed)
        with pytest.raises(kernelhub.errors.InvalidArgumentError) as ours:
            kernelhub.has_kernel("acme/here", version=1, backend="cpu")
        assert str(ours.value) == str(theirs.value)


def metadata_document(**fields) -> dict:
    return {"name": "fancy-kernel", "id": "_fancy_kernel_cuda_abc123", "version": 2, "license": "MIT",
            "upstream": "https://github.com/acme/fancy", "source": "https://github.com/acme/fancy-kb",
            "python-depends": ["einops"], "backend": {"type": "cuda", "archs": ["8.0", "9.0+PTX"]}, **fields}


def test_metadata_fields_are_the_core_parse(kernelhub, tmp_path):
    kernels = pytest.importorskip("kernels")
    path = tmp_path / "metadata.json"
    path.write_text(json.dumps(metadata_document()))
    ours, theirs = kernelhub.Metadata.read_from_file(path), kernels.Metadata.read_from_file(path)
    assert (ours.id, ours.name, ours.version, ours.license, ours.upstream, ours.source, ours.python_depends) == (
        theirs.id, str(theirs.name), theirs.version, theirs.license, theirs.upstream, theirs.source,
        theirs.python_depends)
    assert ours.backend == {"type": str(theirs.backend.backend_type), "archs": theirs.backend.archs}
    assert ours.python_name == "fancy_kernel"
    # What kernels refuses, the core refuses, with a typed error naming the field.
    path.write_text(json.dumps(metadata_document(version="two")))
    with pytest.raises(ValueError):
        kernels.Metadata.read_from_file(path)
    with pytest.raises(kernelhub.errors.CorruptFileError, match="version"):
        kernelhub.Metadata.read_from_file(path)
    # A loaded kernel's metadata is the same parse of its metadata.json.
    script = ("import dataclasses, json, sys, kernelhub\n"
              "module = kernelhub.get_local_kernel(sys.argv[1], backend='cpu')\n"
              "(loaded,) = [k for k in kernelhub.get_loaded_kernels() if k.module is module]\n"
              "print(json.dumps(dataclasses.asdict(loaded.metadata)))")
    loaded = kernelhub.Metadata(**in_child(script, str(cpu_variant_dir().parent.parent)))
    assert loaded == kernelhub.Metadata.read_from_file(cpu_variant_dir() / "metadata.json")
    assert loaded.license == kernels.Metadata.read_from_file(cpu_variant_dir() / "metadata.json").license
