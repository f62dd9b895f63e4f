"""kernelize with kernelhub's loader.

The `kernels` package's kernelize machinery (mappings, modes, devices, forward replacement) stays
as it is; only the repositories change: kernelhub's LayerRepository, LocalLayerRepository and
LockedLayerRepository take the same arguments as theirs and are accepted wherever theirs are
(they subclass them), but `load()` gets the kernel through kernelhub (C++ resolution, download
and verification). A model whose layers map to a kernelhub repository gets kernelhub's kernels:

    from kernelhub import LayerRepository, Mode, kernelize, use_kernel_mapping

    mapping = {"RMSNorm": {"cpu": LayerRepository("org/name", layer_name="RMSNorm", version=1)}}
    with use_kernel_mapping(mapping):
        kernelize(model, mode=Mode.INFERENCE, device="cpu")

Needs the `kernels` package (for kernelize itself); importing kernelhub does not import it.
"""

from __future__ import annotations

from pathlib import Path

import kernels.layer.func as _kernels_func
import kernels.layer.layer as _kernels_layer
from kernels.layer import (  # noqa: F401  (re-exported: the kernelize API, unchanged)
    CUDAProperties,
    Device,
    KernelizeFallback,
    Mode,
    ROCMProperties,
    kernelize,
    register_kernel_mapping,
    replace_kernel_forward_from_hub,
    use_kernel_forward_from_hub,
    use_kernel_func_from_hub,
    use_kernel_mapping,
    use_kernelized_func,
)

from . import _load


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
        kernel = _load.get_kernel(
            self._repo_id,
            revision=self._revision,
            version=self._version,
            trust_remote_code=self._trust_remote_code,
        )
        return _kernels_layer._get_kernel_layer(self, kernel)

    def __str__(self) -> str:
        wanted = f"revision: {self._revision}" if self._revision is not None else f"version: {self._version}"
        return f"`{self._repo_id}` ({wanted}), layer `{self.layer_name}` (kernelhub)"


class LocalLayerRepository(_KernelhubIdentity, _kernels_layer.LocalLayerRepository):
    """A layer of a local kernel directory, loaded through kernelhub."""

    def load(self):
        return _kernels_layer._get_kernel_layer(self, _load.get_local_kernel(Path(self._repo_path)))


class LockedLayerRepository(_KernelhubIdentity):
    """A layer of a repository locked by a kernels.lock (`lockfile`, or the caller's package
    metadata), loaded through kernelhub."""

    def __init__(self, repo_id: str, *, lockfile: Path | None = None, layer_name: str,
                 trust_remote_code: bool | list[str] = False):
        self._repo_id = repo_id
        self._lockfile = lockfile
        self.layer_name = layer_name
        self._trust_remote_code = list(trust_remote_code) if isinstance(trust_remote_code, list) else trust_remote_code
        self._commit = _load.locked_commit(repo_id, lockfile)  # fail now, as kernels does, when not locked

    def load(self):
        kernel = _load.get_locked_kernel(self._repo_id, lockfile=self._lockfile,
                                         trust_remote_code=self._trust_remote_code)
        return _kernels_layer._get_kernel_layer(self, kernel)

    def __eq__(self, other):
        return (type(other) is type(self) and (self._repo_id, self._commit, self.layer_name) ==
                (other._repo_id, other._commit, other.layer_name))

    def __hash__(self):
        return hash((type(self).__qualname__, self._repo_id, self._commit, self.layer_name))

    def __str__(self) -> str:
        return f"`{self._repo_id}` (revision: {self._commit}), layer `{self.layer_name}` (kernelhub)"


# Function repositories (deprecated in kernels 0.16 in favour of the layer ones; kept for drop-in).


class FuncRepository(_KernelhubIdentity, _kernels_func.FuncRepository):
    """A function of a Hub repository, loaded through kernelhub."""

    def load(self):
        kernel = _load.get_kernel(self._repo_id, revision=self._revision, version=self._version,
                                  trust_remote_code=self._trust_remote_code)
        return _kernels_func._get_kernel_func(self, kernel)


class LocalFuncRepository(_KernelhubIdentity, _kernels_func.LocalFuncRepository):
    """A function of a local kernel directory, loaded through kernelhub."""

    def load(self):
        return _kernels_func._get_kernel_func(self, _load.get_local_kernel(Path(self._repo_path)))


class LockedFuncRepository(_KernelhubIdentity, _kernels_func.LockedFuncRepository):
    """A function of a locked repository, loaded through kernelhub."""

    def load(self):
        kernel = _load.get_locked_kernel(self._repo_id, lockfile=self._lockfile,
                                         trust_remote_code=self._trust_remote_code)
        return _kernels_func._get_kernel_func(self, kernel)
