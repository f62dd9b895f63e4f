"""kernelize with kernelhub's loader.

The `kernels` package's kernelize machinery (mappings, modes, devices, forward replacement, the
Kernelized* introspection) stays as it is; only the repositories change: kernelhub's
LayerRepository, LocalLayerRepository and LockedLayerRepository (and the deprecated Func ones)
take the same arguments as theirs, `check_arch` included, and are instances of theirs, but
`load()` gets the kernel through kernelhub (C++ resolution, download and verification). A model
whose layers map to a kernelhub repository gets kernelhub's kernels:

    from kernelhub import LayerRepository, Mode, kernelize, use_kernel_mapping

    mapping = {"RMSNorm": {"cpu": LayerRepository("org/name", layer_name="RMSNorm", version=1)}}
    with use_kernel_mapping(mapping):
        kernelize(model, mode=Mode.INFERENCE, device="cpu")

Needs the `kernels` package at the release the `kernels` extra pins (python/pyproject.toml):
its repository classes live in `kernels._internals.layer` since 0.19. Importing kernelhub does
not import it.
"""

from __future__ import annotations

from pathlib import Path

try:
    import kernels as _kernels
    from kernels._internals.layer import func as _kernels_func
    from kernels._internals.layer import layer as _kernels_layer
except ImportError as e:  # no kernels, or a release older than 0.19 (kernels.layer)
    raise ImportError(
        "kernelhub's kernelize and layer repositories build on the `kernels` package's kernelize, at "
        f"release 0.19 ({e}). Install it with: pip install 'kernelhub[kernels]'"
    ) from e

from . import _load

# The kernelize API, unchanged (kernels' own objects).
CUDAProperties = _kernels.CUDAProperties
Device = _kernels.Device
KernelizeFallback = _kernels.KernelizeFallback
KernelizedFunc = _kernels.KernelizedFunc
KernelizedLayer = _kernels.KernelizedLayer
KernelizedLayers = _kernels.KernelizedLayers
Mode = _kernels.Mode
ROCMProperties = _kernels.ROCMProperties
get_kernelized_layers = _kernels.get_kernelized_layers
kernelize = _kernels.kernelize
register_kernel_mapping = _kernels.register_kernel_mapping
replace_kernel_forward_from_hub = _kernels.replace_kernel_forward_from_hub
use_kernel_forward_from_hub = _kernels.use_kernel_forward_from_hub
use_kernel_func_from_hub = _kernels.use_kernel_func_from_hub
use_kernel_mapping = _kernels.use_kernel_mapping
use_kernelized_func = _kernels.use_kernelized_func


class _KernelhubIdentity:
    """kernels memoises loaded layers by repository (equality and hash); a kernelhub repository
    must never be taken for the kernels package's one with the same arguments, nor the reverse."""

    def __eq__(self, other):
        return type(other) is type(self) and super().__eq__(other)

    def __hash__(self):
        return hash((type(self).__qualname__, super().__hash__()))


class LayerRepository(_KernelhubIdentity, _kernels_layer.LayerRepository):
    """A layer of a Hub repository (`revision` or `version`), loaded through kernelhub."""

    def load(self):
        kernel = _load.get_kernel(self._repo_id, revision=self._revision, version=self._version,
                                  trust_remote_code=self._trust_remote_code, user_agent=self._user_agent,
                                  check_arch=self._check_arch)
        return _kernels_layer._get_kernel_layer(self, kernel)

    def __str__(self) -> str:
        return f"{super().__str__()} (kernelhub)"


class LocalLayerRepository(_KernelhubIdentity, _kernels_layer.LocalLayerRepository):
    """A layer of a local kernel directory, loaded through kernelhub."""

    def load(self):
        kernel = _load.get_local_kernel(Path(self._repo_path), check_arch=self._check_arch)
        return _kernels_layer._get_kernel_layer(self, kernel)


class _Locked:
    """What the locked repositories share: the lock is read when the repository is made, from
    `lockfile` or the caller's package metadata (an unlocked repo fails there, as in kernels), by
    kernelhub (kernels' own lookup would find the kernelhub package as its caller), and loads use
    that lock, whoever calls load(). kernels' locked repositories keep Rust objects; these keep the
    lock's text or path and the commit, so they pickle and copy as plain objects."""

    _what = "layer"

    def _lock(self, repo_id: str, lockfile: Path | None, name: str, trust_remote_code, check_arch: bool):
        self._repo_id = repo_id
        self._lockfile = lockfile
        self._check_arch = check_arch
        self._trust_remote_code = list(trust_remote_code) if isinstance(trust_remote_code, list) else trust_remote_code
        self._lock_source = _load.read_lock(lockfile)
        self._commit = _load.locked_commit(repo_id, self._lock_source)
        setattr(self, f"{self._what}_name", name)

    def _load_kernel(self):
        return _load.load_locked(self._repo_id, self._lock_source, trust_remote_code=self._trust_remote_code,
                                 check_arch=self._check_arch)

    def _key(self) -> tuple:
        trust = tuple(self._trust_remote_code) if isinstance(self._trust_remote_code, list) else self._trust_remote_code
        return (type(self).__qualname__, getattr(self, f"{self._what}_name"), self._repo_id, self._commit,
                self._check_arch, trust)

    def __eq__(self, other):
        return type(other) is type(self) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self) -> str:
        name = getattr(self, f"{self._what}_name")
        return f"`{self._repo_id}` (revision: {self._commit}), {self._what} `{name}` (kernelhub)"

    def __getstate__(self):
        return dict(self.__dict__)

    def __setstate__(self, state: dict):
        self.__dict__.update(state)


class LockedLayerRepository(_Locked, _kernels_layer.LockedLayerRepository):
    """A layer of a repository locked by a kernels.lock (`lockfile`, or the caller's package
    metadata), loaded through kernelhub."""

    def __init__(self, repo_id: str, *, lockfile: Path | None = None, layer_name: str,
                 trust_remote_code: bool | list[str] = False, check_arch: bool = True):
        self._lock(repo_id, lockfile, layer_name, trust_remote_code, check_arch)

    def load(self):
        return _kernels_layer._get_kernel_layer(self, self._load_kernel())


# Function repositories (deprecated in kernels in favour of the layer ones; kept for drop-in).


class FuncRepository(_KernelhubIdentity, _kernels_func.FuncRepository):
    """A function of a Hub repository, loaded through kernelhub."""

    def load(self):
        kernel = _load.get_kernel(self._repo_id, revision=self._revision, version=self._version,
                                  trust_remote_code=self._trust_remote_code, check_arch=self._check_arch)
        return _kernels_func._get_kernel_func(self, kernel)


class LocalFuncRepository(_KernelhubIdentity, _kernels_func.LocalFuncRepository):
    """A function of a local kernel directory, loaded through kernelhub."""

    def load(self):
        kernel = _load.get_local_kernel(Path(self._repo_path), check_arch=self._check_arch)
        return _kernels_func._get_kernel_func(self, kernel)


class LockedFuncRepository(_Locked, _kernels_func.LockedFuncRepository):
    """A function of a locked repository, loaded through kernelhub."""

    _what = "func"

    def __init__(self, repo_id: str, *, lockfile: Path | None = None, func_name: str,
                 trust_remote_code: bool | list[str] = False, check_arch: bool = True):
        self._lock(repo_id, lockfile, func_name, trust_remote_code, check_arch)

    def load(self):
        return _kernels_func._get_kernel_func(self, self._load_kernel())
