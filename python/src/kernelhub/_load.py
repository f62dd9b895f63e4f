"""The loader API of the `kernels` package (kernels/load.py, install.py, variants.py). Every rule
is the C++ core's (kernelhub._core, with the GIL released): the revision-or-version rule,
LOCAL_KERNELS, lock files, revision resolution, variant selection, download, verification and
metadata.json, with the kernels package's words where it has its own. What stays here: reading
the imported torch, finding the caller's package for a lock in its metadata, importing the variant
(_importer.py), and the signatures, return values and exception types of kernels 0.17.2, so
`from kernelhub import get_kernel` replaces `from kernels import get_kernel` unchanged.

Configuration comes from the same environment variables, read by the core at call time:
LOCAL_KERNELS, HF_ENDPOINT, HF_TOKEN, HF_HOME / HF_HUB_CACHE / KERNELS_CACHE (the same cache as
kernels and huggingface_hub), HF_HUB_OFFLINE.
"""

from __future__ import annotations

import functools
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from . import _core, errors
from ._importer import RepoInfo, import_variant


@functools.cache
def _torch() -> _core.TorchRuntime:
    """The torch this process imports, read as kernels reads it (kernels/variants.py and
    backends.py), at the first call that selects a variant: `import kernelhub` imports no torch.
    The core decides what the text means (resolver/torch_version_info.hpp)."""
    try:
        import torch
    except ImportError:
        return _core.TorchRuntime()  # as kernels without torch: no torch version
    return _core.TorchRuntime(
        version=torch.__version__,
        cxx11_abi=torch.compiled_with_cxx11_abi(),
        cuda=torch.version.cuda,
        hip=torch.version.hip,
        xpu=getattr(torch.version, "xpu", None),
    )


def _call(function, *args, **kwargs):
    """Runs a core function for the imported torch (see errors.call)."""
    return errors.call(function, *args, torch=_torch(), **kwargs)


def _trust(trust_remote_code: bool | list[str]) -> dict:
    if isinstance(trust_remote_code, (list, tuple)):
        return {"trust_remote_code": False, "trusted_repos": [str(r) for r in trust_remote_code]}
    return {"trust_remote_code": bool(trust_remote_code), "trusted_repos": []}


def _import(fetched: dict, repo_id: str | None = None) -> ModuleType:
    """Imports what the core fetched; a get_kernel load from the Hub carries its RepoInfo. What the
    core took from the cache because the Hub could not be reached is said, as huggingface_hub
    says its own fallbacks: a warning on the `kernelhub` logger."""
    for note in fetched.get("fallbacks", ()):
        logging.getLogger("kernelhub").warning("kernelhub: %s", note)
    from_hub = repo_id is not None and fetched["from_hub"]
    return import_variant(fetched, RepoInfo(repo_id=repo_id, revision=fetched["revision"]) if from_hub else None)


def get_kernel(
    repo_id: str,
    *,
    revision: str | None = None,
    version: int | None = None,
    backend: str | None = None,
    user_agent: str | dict | None = None,
    trust_remote_code: bool | list[str] = False,
    check_arch: bool = True,
) -> ModuleType:
    """Load a kernel from the Hub: the variant that runs here, downloaded into the Hugging Face
    cache (if it was not there), verified, and imported as a module named by its metadata `id`.

    Exactly one of `revision` (branch, tag or commit) and `version` (major version: branch
    `v<N>`) is required. `trust_remote_code` (True, or a list of repo ids) allows publishers the
    Hub does not mark as trusted. `user_agent` is accepted for compatibility and not sent.
    `check_arch`: the core always checks CUDA variants against the visible GPUs.
    """
    key = _pinned_key(repo_id, revision, version, backend)
    if (module := _pinned_modules.get(key)) is not None:
        return module
    fetched = _call(_core.fetch_kernel, repo_id, revision=revision, version=version, backend=backend,
                    **_trust(trust_remote_code))
    module = _import(fetched, repo_id)
    if fetched["pinned"]:
        _pinned_modules[key] = module
    return module


# get_kernel at a full commit, once imported, returns the same module for the rest of the process:
# the commit is immutable and its module already runs, so resolving, listing and re-hashing the
# files again (what the first call did) could not change what a caller gets. The core says whether
# a call was pinned; the key holds the call and what could point it elsewhere: the cache location,
# the backend override and LOCAL_KERNELS.
_pinned_modules: dict[tuple, ModuleType] = {}


def _pinned_key(repo_id: str, revision: str | None, version: int | None, backend: str | None) -> tuple:
    names = ("KERNELS_CACHE", "HF_HUB_CACHE", "HF_HOME", "KERNELHUB_BACKEND", "LOCAL_KERNELS")
    return repo_id, revision, version, backend, tuple(os.environ.get(name) for name in names)


def get_local_kernel(
    repo_path: Path,
    *,
    backend: str | None = None,
    trust_remote_code: bool | list[str] = False,
    user_agent: str | dict | None = None,
) -> ModuleType:
    """Import a kernel from a local directory: its best variant under `repo_path` or
    `repo_path/build`, or `repo_path` itself when it is a variant directory."""
    return _import(_call(_core.fetch_local, str(repo_path), backend))


def has_kernel(
    repo_id: str,
    *,
    revision: str | None = None,
    version: int | None = None,
    backend: str | None = None,
    trust_remote_code: bool | list[str] = False,
    check_arch: bool = True,
) -> bool:
    """Whether a variant of `repo_id` runs here (nothing is downloaded but the listing)."""
    return _call(_core.has_kernel, repo_id, revision=revision, version=version, backend=backend,
                 **_trust(trust_remote_code))


def install_kernel(
    repo_id: str,
    *,
    revision: str | None = None,
    version: int | None = None,
    backend: str | None = None,
    local_files_only: bool = False,
    user_agent: str | dict | None = None,
    trust_remote_code: bool | list[str] = False,
) -> Path:
    """Download (and verify) the variant of `repo_id` that runs here; return its directory."""
    fetched = _call(_core.fetch_kernel, repo_id, revision=revision, version=version, backend=backend,
                    offline=local_files_only, local_kernels=False, **_trust(trust_remote_code))
    return Path(fetched["path"])


# ---------------------------------------------------------------------------------------------
# Lock files


def _caller_lock() -> dict:
    """kernels.lock from the metadata of the distribution that called us (as kernels/locking.py
    finds it), as the core's lock_json and lock_source."""
    import importlib.metadata
    import inspect

    stack = inspect.stack()
    first = inspect.getmodule(stack[0][0])
    caller = None
    for frame in stack[1:]:
        module = inspect.getmodule(frame[0])
        if module is not None and module != first and not module.__name__.startswith("kernelhub"):
            caller = module
            break
    if caller is not None:
        package = caller.__name__.split(".")[0]
        for dist_name in importlib.metadata.packages_distributions().get(package, []):
            lock_json = importlib.metadata.distribution(dist_name).read_text("kernels.lock")
            if lock_json is not None:
                return {"lock_json": lock_json, "lock_source": f"kernels.lock of the `{dist_name}` distribution"}
    raise errors.InvalidArgumentError(
        "Could not find a `kernels.lock` file in the caller's package metadata. "
        "Please lock kernels with `kernels lock <project>` and then reinstall the project."
    )


def _lock(lockfile: Path | None) -> dict:
    return _caller_lock() if lockfile is None else {"lockfile": str(lockfile)}


def locked_commit(repo_id: str, lockfile: Path | None) -> str:
    """The commit `repo_id` is locked at (kernels.lock from `lockfile`, or from the caller's
    package metadata when it is None)."""
    return errors.call(_core.locked_commit, repo_id, **_lock(lockfile))


def load_kernel(repo_id: str, *, lockfile: Path | None, backend: str | None = None) -> ModuleType:
    """Load a locked kernel that is already in the cache; never downloads (kernels.lock from
    `lockfile`, or from the caller's package metadata when it is None)."""
    return _import(_call(_core.fetch_locked, repo_id, backend=backend, offline=True, **_lock(lockfile)))


def get_locked_kernel(
    repo_id: str,
    *,
    lockfile: Path | None,
    trust_remote_code: bool | list[str] = False,
    user_agent: str | dict | None = None,
) -> ModuleType:
    """Load a kernel at the commit its lock file names, downloading it if needed."""
    return _import(_call(_core.fetch_locked, repo_id, **_lock(lockfile), **_trust(trust_remote_code)))


# ---------------------------------------------------------------------------------------------
# Decision traces


@dataclass(frozen=True)
class Variant:
    """A build variant, by its directory name."""

    variant_str: str

    def __str__(self) -> str:
        return self.variant_str


@dataclass(unsafe_hash=True)
class VariantAccepted:
    """A variant that runs here."""

    variant: Variant


@dataclass(unsafe_hash=True)
class VariantRejected:
    """A variant that does not run here, and why."""

    variant: Variant
    reason: str


def get_kernel_variants(
    repo_id: str,
    *,
    revision: str | None = None,
    version: int | None = None,
    backend: str | None = None,
) -> list[VariantAccepted | VariantRejected]:
    """Every build variant of `repo_id` at the revision, compatible ones first, best first."""
    decisions = _call(_core.kernel_variants, repo_id, revision=revision, version=version, backend=backend)
    return [
        VariantAccepted(Variant(name)) if accepted else VariantRejected(Variant(name), reason)
        for name, accepted, reason in decisions
    ]
