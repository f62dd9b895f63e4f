"""kernelhub's Python API is the kernels package's: the same signatures, an import that pulls in
nothing heavy, exception classes that satisfy kernels' except clauses, and a local kernel imported
as the same module (name, sys.modules entry) as kernels imports it."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest
from shim_support import PACKAGE_DIR, cpu_variant_dir, import_shim

API = ["get_kernel", "get_local_kernel", "has_kernel", "install_kernel", "load_kernel", "get_locked_kernel",
       "get_kernel_variants", "get_loaded_kernels"]


@pytest.fixture(scope="module")
def kernelhub():
    return import_shim()


REPOSITORIES = ["LayerRepository", "LocalLayerRepository", "LockedLayerRepository", "FuncRepository",
                "LocalFuncRepository", "LockedFuncRepository"]
# What kernels 0.19.1 exports that kernelhub does not: its benchmark harness (no loader API), and
# get_kernel_dep, which a kernel calls while it is imported (kernel-depends, loaded by the kernels
# machinery that imports it).
NOT_OURS = {"Benchmark"}


@pytest.mark.parametrize("name", API + REPOSITORIES)
def test_signatures_match_the_kernels_package(kernelhub, name):
    kernels = pytest.importorskip("kernels")
    ours = [(p.name, p.kind, p.default) for p in inspect.signature(getattr(kernelhub, name)).parameters.values()]
    theirs = [(p.name, p.kind, p.default) for p in inspect.signature(getattr(kernels, name)).parameters.values()]
    assert ours == theirs


def test_everything_kernels_exports(kernelhub):
    kernels = pytest.importorskip("kernels")
    assert sorted(set(kernels.__all__) - set(kernelhub.__all__)) == sorted(NOT_OURS)
    for name in set(kernels.__all__) - NOT_OURS - {"__version__"}:
        assert getattr(kernelhub, name) is not None, name
    # The repositories are kernels' (kernelize and user code may check), loading through kernelhub.
    for name in REPOSITORIES:
        assert issubclass(getattr(kernelhub, name), getattr(kernels, name)), name
    # The introspection and kernelize API are kernels' own objects.
    for name in ("KernelizedFunc", "KernelizedLayer", "KernelizedLayers", "get_kernelized_layers", "kernelize", "Mode"):
        assert getattr(kernelhub, name) is getattr(kernels, name), name


def test_locked_repositories_pickle_and_copy(kernelhub, tmp_path):
    import copy
    import json
    import pickle

    commit = "0" * 40
    lock = tmp_path / "kernels.lock"
    lock.write_text(json.dumps([{"dependency": {"repo-id": "acme/x", "version": 1}, "lock": {"commit": commit}}]))
    for repo in (kernelhub.LockedLayerRepository("acme/x", lockfile=lock, layer_name="RMSNorm", check_arch=False),
                 kernelhub.LockedFuncRepository("acme/x", lockfile=lock, func_name="rms_norm")):
        for other in (pickle.loads(pickle.dumps(repo)), copy.deepcopy(repo), copy.copy(repo)):
            assert other == repo and hash(other) == hash(repo) and str(other) == str(repo)
        assert commit in str(repo)
    with pytest.raises(ValueError, match="`acme/y` is not locked"):
        kernelhub.LockedLayerRepository("acme/y", lockfile=lock, layer_name="RMSNorm")


def test_import_is_light(kernelhub):
    # torch, huggingface_hub and kernels load on first use, not on import.
    code = ("import sys, kernelhub\n"
            "print(sorted(m for m in ('torch', 'kernels', 'huggingface_hub') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(PACKAGE_DIR), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "[]"


def test_error_classes_satisfy_kernels_except_clauses(kernelhub):
    from kernelhub import errors
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    # (code, message, missing) as kernelhub._core.CoreError carries them: the class follows the
    # typed `missing`, never the message's wording.
    cases = [
        (("not_found", "kernel repo `a/b` not found (HTTP 404 RepoNotFound)", "repo"), RepositoryNotFoundError),
        (("not_found", "revision `x` not found in kernel repo `a/b`", "revision"), RevisionNotFoundError),
        (("not_found", "Version 7 of `a/b` not found, available versions: v1", "version"), ValueError),
        (("not_found", "reworded: no such repository", "repo"), RepositoryNotFoundError),
        (("no_compatible_variant", "Cannot find a build variant", ""), FileNotFoundError),
        (("offline_miss", "offline", ""), ValueError),
        (("offline_miss", "offline", ""), FileNotFoundError),
        (("untrusted_publisher", "not trusted", ""), ValueError),
        (("integrity_mismatch", "digest", ""), RuntimeError),
    ]
    for args, expected in cases:
        error = errors.from_core(*args)
        assert isinstance(error, expected) and isinstance(error, errors.KernelhubError), (args, expected)
        assert str(error) == args[1] and error.code == args[0]
    # A local path, or a file inside a repo, is a plain NotFoundError (FileNotFoundError), whatever
    # its message says.
    plain = errors.from_core("not_found", "kernel repo `a/b` not found (HTTP 404 RepoNotFound)", "")
    assert type(plain) is errors.NotFoundError and not isinstance(plain, (RepositoryNotFoundError, ValueError))
    assert type(errors.from_core("not_found", "file `x` not found", "file")) is errors.NotFoundError
    with pytest.raises(RepositoryNotFoundError):
        raise errors.from_core("not_found", "kernel repo `a/b` not found", "repo")


def test_local_kernel_is_the_module_kernels_imports(kernelhub):
    kernels = pytest.importorskip("kernels")
    local = cpu_variant_dir().parent.parent
    theirs = kernels.get_local_kernel(local, backend="cpu")
    ours = kernelhub.get_local_kernel(local, backend="cpu")
    # What kernels imported from that very file, kernelhub uses rather than executing it again.
    assert ours is theirs is sys.modules[ours.__name__]
    assert kernelhub.get_local_kernel(local, backend="cpu") is ours
    assert ours.__name__.startswith("_reference_kernels_cpu_")
    assert [k.metadata.id for k in kernelhub.get_loaded_kernels()] == [ours.__name__]
    assert kernelhub.get_loaded_kernels()[0].repo_info is None  # a local load, as in kernels


def test_bad_input_gives_kernels_value_errors(kernelhub):
    with pytest.raises(ValueError, match="A kernel version or revision must be specified"):
        kernelhub.get_kernel("acme/reference-kernels")
    with pytest.raises(ValueError, match="Only one of `revision` or `version`"):
        kernelhub.get_kernel("acme/reference-kernels", version=1, revision="main")
    with pytest.raises(kernelhub.KernelhubError) as raised:
        kernelhub.get_kernel("not a repo id", version=1)
    assert isinstance(raised.value, ValueError) and "not a repo id" in str(raised.value)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        kernelhub.get_local_kernel("/nonexistent/kernel")


def test_threads_loading_at_once_get_one_module(kernelhub):
    # The core runs without the GIL, so threads reach the import together; one module results.
    code = ("import threading, sys, kernelhub\n"
            "out = []\n"
            "load = lambda: out.append(kernelhub.get_local_kernel(sys.argv[1], backend='cpu'))\n"
            "threads = [threading.Thread(target=load) for _ in range(8)]\n"
            "[t.start() for t in threads]; [t.join() for t in threads]\n"
            "print(len(out), len(set(map(id, out))), len(kernelhub.get_loaded_kernels()))\n")
    local = str(cpu_variant_dir().parent.parent)
    out = subprocess.run([sys.executable, "-c", code, local], capture_output=True, text=True, timeout=300,
                         env={"PYTHONPATH": str(PACKAGE_DIR), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["8", "1", "1"]
