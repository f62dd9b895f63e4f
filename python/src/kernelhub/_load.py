"""The loader API of the `kernels` package (kernels/load.py, install.py, variants.py), with the
heavy work — revision resolution, variant selection, download, verification — done by the C++
core (kernelhub._core) with the GIL released. Signatures, return values and exception types are
those of kernels 0.17.2, so `from kernelhub import get_kernel` replaces `from kernels import
get_kernel` unchanged.

Configuration comes from the same environment variables, read at call time: LOCAL_KERNELS,
HF_ENDPOINT, HF_TOKEN, HF_HOME / HF_HUB_CACHE / KERNELS_CACHE (the same cache as kernels and
huggingface_hub), HF_HUB_OFFLINE.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from . import errors
from ._importer import RepoInfo, import_variant

_TRUE = {"1", "ON", "YES", "TRUE"}


def _core():
    """kernelhub._core, imported on first use: it links LibTorch, which `import torch` loads
    from the same files first, so `import kernelhub` alone stays cheap."""
    import torch  # noqa: F401  (the kernel modules need it anyway)

    from . import _core as core

    return core


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").upper() in _TRUE


def _call(function, *args, **kwargs):
    """Runs a core function, turning its CoreError into the kernelhub/kernels exception type."""
    core = _core()
    try:
        return function(core)(*args, **kwargs)
    except core.CoreError as e:
        raise errors.from_core(*e.args) from None


def _revision_or_version(revision: str | None, version: int | None) -> None:
    # The kernels package's checks and wording (kernels/_versions.py revision_or_version).
    if revision is not None and version is not None:
        raise errors.InvalidArgumentError("Only one of `revision` or `version` must be specified.")
    if revision is None and version is None:
        raise errors.InvalidArgumentError(
            "A kernel version or revision must be specified. "
            "Use `version=<major>` for a stable kernel API version or `revision=<branch/tag/commit>` "
            "for an explicit Hub revision. See: https://huggingface.co/docs/kernels/migration"
        )


@functools.lru_cache(maxsize=1)
def _parse_local_kernel_overrides(local_kernels: str) -> dict[str, Path]:
    overrides = {}
    for entry in local_kernels.split(":"):
        if "=" not in entry:
            raise errors.InvalidArgumentError(
                f"Invalid LOCAL_KERNELS entry: {entry}. Expected format: repo_id_1=path_1:repo_id_2=path_2"
            )
        repo_id, path = entry.split("=", 1)
        overrides[repo_id] = Path(path)
    return overrides


def _local_override(repo_id: str) -> Path | None:
    value = os.environ.get("LOCAL_KERNELS")
    return None if value is None else _parse_local_kernel_overrides(value).get(repo_id)


def _trust(trust_remote_code: bool | list[str]) -> dict:
    if isinstance(trust_remote_code, (list, tuple)):
        return {"trust_remote_code": False, "trusted_repos": [str(r) for r in trust_remote_code]}
    return {"trust_remote_code": bool(trust_remote_code), "trusted_repos": []}


def _fetch_local(repo_path: Path, backend: str | None) -> dict:
    return _call(lambda c: c.fetch_local, str(repo_path), backend)


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
    _revision_or_version(revision, version)
    local = _local_override(repo_id)
    if local is not None:
        return import_variant(_fetch_local(local, backend))
    pinned_key = _pinned_key(repo_id, revision, backend)
    if pinned_key is not None and (module := _pinned_modules.get(pinned_key)) is not None:
        return module
    fetched = _call(
        lambda c: c.fetch_hub,
        repo_id,
        revision=revision,
        version=version,
        backend=backend,
        offline=_offline(),
        **_trust(trust_remote_code),
    )
    module = import_variant(fetched, RepoInfo(repo_id=repo_id, revision=fetched["revision"]))
    if pinned_key is not None:
        _pinned_modules[pinned_key] = module
    return module


# get_kernel at a full commit, once imported, returns the same module for the rest of the process:
# the commit is immutable and its module already runs, so resolving, listing and re-hashing the
# files again (what the first call did) could not change what a caller gets. Keyed also by what
# could point the same call elsewhere: the backend and the cache location.
_pinned_modules: dict[tuple, ModuleType] = {}


def _pinned_key(repo_id: str, revision: str | None, backend: str | None) -> tuple | None:
    if revision is None or len(revision) != 40 or any(c not in "0123456789abcdef" for c in revision):
        return None
    cache = tuple(os.environ.get(name) for name in ("KERNELS_CACHE", "HF_HUB_CACHE", "HF_HOME", "KERNELHUB_BACKEND"))
    return repo_id, revision, backend, cache


def get_local_kernel(
    repo_path: Path,
    *,
    backend: str | None = None,
    trust_remote_code: bool | list[str] = False,
    user_agent: str | dict | None = None,
) -> ModuleType:
    """Import a kernel from a local directory: its best variant under `repo_path` or
    `repo_path/build`, or `repo_path` itself when it is a variant directory."""
    return import_variant(_fetch_local(Path(repo_path), backend))


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
    _revision_or_version(revision, version)
    local = _local_override(repo_id)
    if local is not None:
        try:
            decided = _call(lambda c: c.local_decisions, str(local), backend)
        except FileNotFoundError:
            return False
        return any(accepted for _, accepted, _ in decided["decisions"])
    try:
        decided = _call(lambda c: c.hub_decisions, repo_id, revision=revision, version=version,
                        backend=backend, offline=_offline(), check_trust=True, **_trust(trust_remote_code))
    except (errors.NoCompatibleVariantError, errors.OfflineMissError):
        return False
    return any(accepted for _, accepted, _ in decided["decisions"])


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
    _revision_or_version(revision, version)
    fetched = _call(
        lambda c: c.fetch_hub,
        repo_id,
        revision=revision,
        version=version,
        backend=backend,
        offline=local_files_only or _offline(),
        **_trust(trust_remote_code),
    )
    return Path(fetched["path"])


# ---------------------------------------------------------------------------------------------
# Lock files


def _locked_commit(repo_id: str, lock_json: str, source: str) -> str:
    """The commit `repo_id` is locked at, in either kernels.lock format (kernels >= 0.17:
    [{"dependency": {"repo-id": ...}, "lock": {"commit": ...}}]; <= 0.16: [{"repo_id", "sha"}])."""
    import json

    try:
        entries = json.loads(lock_json)
    except json.JSONDecodeError as e:
        raise errors.CorruptFileError(f"{source} is not JSON ({e}); regenerate it with `kernels lock <project>`")
    if not isinstance(entries, list):
        raise errors.CorruptFileError(
            f"{source} is not a JSON list of locks; regenerate it with `kernels lock <project>`"
        )
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        if isinstance(entry.get("dependency"), dict) and entry["dependency"].get("repo-id") == repo_id:
            return str(entry.get("lock", {}).get("commit", ""))
        if entry.get("repo_id") == repo_id:
            return str(entry.get("sha", ""))
    raise errors.InvalidArgumentError(
        f"Kernel `{repo_id}` is not locked. "
        "Please lock it with `kernels lock <project>` and then reinstall the project."
    )


def _caller_lock_json() -> tuple[str, str]:
    """kernels.lock from the metadata of the distribution that called us (as kernels does)."""
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
                return lock_json, f"kernels.lock of the `{dist_name}` distribution"
    raise errors.InvalidArgumentError(
        "Could not find a `kernels.lock` file in the caller's package metadata. "
        "Please lock kernels with `kernels lock <project>` and then reinstall the project."
    )


def _lock(repo_id: str, lockfile: Path | None) -> tuple[str, str | None]:
    """(commit, lockfile path for the core's hash check, if there is a file)."""
    if lockfile is None:
        lock_json, source = _caller_lock_json()
        return _locked_commit(repo_id, lock_json, source), None
    return _locked_commit(repo_id, Path(lockfile).read_text(), str(lockfile)), str(lockfile)


def _locked(repo_id: str, lockfile: Path | None) -> dict:
    """What the core is asked for a locked load: the lock file itself (the core reads the commit
    and checks the variant's lock hash), or, for a lock from package metadata, its commit."""
    commit, lock_path = _lock(repo_id, lockfile)  # kernels' errors, e.g. for a repo not locked
    return {"lockfile": lock_path} if lock_path is not None else {"revision": commit}


def load_kernel(repo_id: str, *, lockfile: Path | None, backend: str | None = None) -> ModuleType:
    """Load a locked kernel that is already in the cache; never downloads (kernels.lock from
    `lockfile`, or from the caller's package metadata when it is None)."""
    fetched = _call(lambda c: c.fetch_hub, repo_id, backend=backend, offline=True,
                    **_locked(repo_id, lockfile))
    return import_variant(fetched)


def get_locked_kernel(
    repo_id: str,
    *,
    lockfile: Path | None,
    trust_remote_code: bool | list[str] = False,
    user_agent: str | dict | None = None,
) -> ModuleType:
    """Load a kernel at the commit its lock file names, downloading it if needed."""
    fetched = _call(lambda c: c.fetch_hub, repo_id, offline=_offline(), **_locked(repo_id, lockfile),
                    **_trust(trust_remote_code))
    return import_variant(fetched)


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
    _revision_or_version(revision, version)
    decided = _call(lambda c: c.hub_decisions, repo_id, revision=revision, version=version,
                    backend=backend, offline=_offline())
    return [
        VariantAccepted(Variant(name)) if accepted else VariantRejected(Variant(name), reason)
        for name, accepted, reason in decided["decisions"]
    ]
