"""The loader API of the `kernels` package (0.19.1: kernels/_internals/load.py, install.py,
variants.py). Every rule is the C++ core's (kernelhub._core, with the GIL released): the
revision-or-version rule, LOCAL_KERNELS, UNSTABLE_KERNELS_ALL_LATEST, lock files, revision
resolution, variant selection and the GPU fit (`check_arch`), download, the checks of every load
(fetch/internal/kernelhub/fetch/internal/variant_checks.hpp: kernels-minver, the digest) and metadata.json, with
the kernels package's words where it has its own. What stays here: reading the imported torch,
finding the caller's package for a lock in its metadata, importing the variant (_importer.py),
logging the core's warnings (as kernels logs them), and the signatures, return values and
exception types of kernels 0.19.1, so `from kernelhub import get_kernel` replaces
`from kernels import get_kernel` unchanged.

Configuration comes from the same environment variables (docs/ENVIRONMENT.md), read by the core
once per call: LOCAL_KERNELS, UNSTABLE_KERNELS_ALL_LATEST, HF_ENDPOINT, HF_TOKEN, HF_HOME / HF_HUB_CACHE /
KERNELS_CACHE (the same cache as kernels and huggingface_hub), HF_HUB_OFFLINE. Downloads show
huggingface_hub's progress bars (_progress.py; HF_HUB_DISABLE_PROGRESS_BARS).
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from types import ModuleType

from . import _core, _environment, errors
from ._importer import RepoInfo, import_variant
from ._progress import bar_reporter
from ._warnings import log_load_warnings


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
        rocm=getattr(torch.version, "rocm", None),
    )


def _call(function, *args, **kwargs):
    """Runs a core function for the imported torch (see errors.call)."""
    return errors.call(function, *args, torch=_torch(), **kwargs)


def _trust(trust_remote_code: bool | list[str]) -> dict:
    if isinstance(trust_remote_code, (list, tuple)):
        return {"trust_remote_code": False, "trusted_repos": [str(r) for r in trust_remote_code]}
    return {"trust_remote_code": bool(trust_remote_code), "trusted_repos": []}


def _import(fetched: dict, repo_id: str | None = None) -> ModuleType:
    """Imports what the core fetched, after the kernels it depends on (which the core fetched and
    verified with it, kernelhub/fetch/internal/kernel_tree.hpp) and after logging the warnings its checks gave (no
    digest, a dirty build, ...) as kernels logs them; a load from the Hub carries its RepoInfo.
    What the core took from the cache because the Hub could not be reached is said, as
    huggingface_hub says its own fallbacks: a warning on the `kernelhub` logger."""
    for note in fetched.get("fallbacks", ()):
        logging.getLogger("kernelhub").warning("kernelhub: %s", note)
    log_load_warnings(fetched)
    deps = {dep["repo_id"]: _import(dep, dep["repo_id"]) for dep in fetched.get("dependencies", [])}
    from_hub = repo_id is not None and fetched["from_hub"]
    repo_info = RepoInfo(repo_id=repo_id, revision=fetched["revision"]) if from_hub else None
    return import_variant(fetched, repo_info, deps)


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
    `check_arch=False` skips fitting CUDA variants to the visible GPUs (for kernels that run on
    more GPUs than they declare, through a Triton fallback).
    """
    key = _pinned_key(repo_id, revision, version, backend, check_arch)
    if (module := _pinned_modules.get(key)) is not None:
        return module
    fetched = _call(_core.fetch_kernel, repo_id, revision=revision, version=version, backend=backend,
                    check_arch=check_arch, progress=bar_reporter(), **_trust(trust_remote_code))
    module = _import(fetched, repo_id)
    if fetched["pinned"]:
        _pinned_modules[key] = module
    return module


# get_kernel at a full commit, once imported, returns the same module for the rest of the process:
# the commit is immutable and its module already runs, so resolving, listing and re-hashing the
# files again (what the first call did) could not change what a caller gets. The core says whether
# a call was pinned; the key holds the call and what could point it elsewhere
# (_environment.PINNED_CALL_VARIABLES).
_pinned_modules: dict[tuple, ModuleType] = {}


def _pinned_key(repo_id: str, revision: str | None, version: int | None, backend: str | None,
                check_arch: bool) -> tuple:
    return repo_id, revision, version, backend, check_arch, _environment.values(_environment.PINNED_CALL_VARIABLES)


def get_local_kernel(
    repo_path: Path,
    *,
    backend: str | None = None,
    trust_remote_code: bool | list[str] = False,
    user_agent: str | dict | None = None,
    check_arch: bool = True,
) -> ModuleType:
    """Import a kernel from a local directory: its best variant under `repo_path` or
    `repo_path/build`, or `repo_path` itself when it is a variant directory."""
    return _import(_call(_core.fetch_local, str(repo_path), backend, check_arch=check_arch))


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
                 check_arch=check_arch, **_trust(trust_remote_code))


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
                    offline=local_files_only, local_kernels=False, progress=bar_reporter(),
                    **_trust(trust_remote_code))
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


def read_lock(lockfile: Path | None) -> dict:
    """Where a locked load takes its lock from, as the core's arguments: `lockfile`, or (None) the
    text of the caller's package's kernels.lock, read now."""
    return _caller_lock() if lockfile is None else {"lockfile": str(lockfile)}


def locked_commit(repo_id: str, lock: dict) -> str:
    """The commit `repo_id` is locked at in `lock` (read_lock's)."""
    return errors.call(_core.locked_commit, repo_id, **lock)


def load_locked(repo_id: str, lock: dict, *, backend: str | None = None, offline: bool = False,
                trust_remote_code: bool | list[str] = False, check_arch: bool = True) -> ModuleType:
    """The kernel at the commit `lock` (read_lock's) pins `repo_id` at (with its RepoInfo, as
    kernels 0.18+ gives every load from the Hub)."""
    return _import(_call(_core.fetch_locked, repo_id, backend=backend, offline=offline, check_arch=check_arch,
                         progress=None if offline else bar_reporter(), **lock, **_trust(trust_remote_code)),
                   repo_id)


def load_kernel(repo_id: str, *, lockfile: Path | None, backend: str | None = None,
                check_arch: bool = True) -> ModuleType:
    """Load a locked kernel that is already in the cache; never downloads (kernels.lock from
    `lockfile`, or from the caller's package metadata when it is None)."""
    return load_locked(repo_id, read_lock(lockfile), backend=backend, offline=True, check_arch=check_arch)


def get_locked_kernel(
    repo_id: str,
    *,
    lockfile: Path | None,
    trust_remote_code: bool | list[str] = False,
    user_agent: str | dict | None = None,
    check_arch: bool = True,
) -> ModuleType:
    """Load a kernel at the commit its lock file names, downloading it if needed."""
    return load_locked(repo_id, read_lock(lockfile), trust_remote_code=trust_remote_code, check_arch=check_arch)


# ---------------------------------------------------------------------------------------------
# Decision traces


def get_kernel_variants(
    repo_id: str,
    *,
    revision: str | None = None,
    version: int | None = None,
    backend: str | None = None,
) -> list:
    """Every build variant of `repo_id` at the revision, compatible ones first, best first: each a
    VariantAccepted or VariantRejected whose `variant` has kernels' shape (_variants.py:
    `decision.variant.framework`, `.backend`, ...). A directory whose name is no variant is left
    out with a warning, as kernels leaves it out."""
    from . import _variants  # its classes are made on first use, not at `import kernelhub`

    decisions = _call(_core.kernel_variants, repo_id, revision=revision, version=version, backend=backend)
    out = []
    for name, accepted, reason in decisions:
        parts = _core.parse_variant(name)
        if parts is None:
            logging.getLogger("kernelhub").warning(
                "Repository %s (revision: %s) contains invalid build variant variant: %r",
                repo_id, revision if revision is not None else f"v{version}", name)
            continue
        variant = _variants.from_parts(parts)
        out.append(_variants.VariantAccepted(variant) if accepted else _variants.VariantRejected(variant, reason))
    return out
