"""kernelhub: a drop-in for the `kernels` package's loader, backed by kernelhub's C++ core.

    from kernelhub import get_kernel          # instead of: from kernels import get_kernel

    rms = get_kernel("kernels-community/rmsnorm", version=1)

Same functions, signatures, return values (the variant's module, imported under its metadata
`id`), exception types and environment variables as kernels 0.17; every rule (LOCAL_KERNELS, lock
files, revision or version, resolution, variant selection, download, verification, metadata.json)
is the C++ core's, run with the GIL released. kernelize and the layer repositories are in
kernelhub.layers (re-exported here; they need the `kernels` package).

Importing kernelhub is cheap: the C++ core links no torch, so one build fits every torch; torch is
read (as kernels reads it) at the first call that selects a variant, and the kernelize API is
imported on first access.

Where kernelhub differs from kernels 0.17 on purpose:
- with a CUDA torch and no CUDA driver, `backend=None` selects cpu (kernels picks CUDA, which
  cannot run there); CUDA variants are checked against the visible GPUs whatever `check_arch` says;
- every load verifies the variant's files against metadata.json `digest` (and against a lock
  file's per-variant hash, kernels <= 0.16 format, when it has one) before importing them, except
  that get_kernel at a full commit returns the module it already imported in this process;
- `user_agent` is accepted and not sent;
- LOCAL_KERNELS entries are checked as the C++ core checks them: each repo id must be `org/name`
  and each path non-empty; empty entries are skipped.
"""

from ._importer import LoadedKernel, Metadata, RepoInfo, get_kernel_dep, get_loaded_kernels
from ._load import (
    VariantAccepted,
    VariantRejected,
    get_kernel,
    get_kernel_variants,
    get_local_kernel,
    get_locked_kernel,
    has_kernel,
    install_kernel,
    load_kernel,
)
from .errors import KernelhubError

__version__ = "0.1.0"

# Served by kernelhub.layers, imported on first access (it imports the kernels package).
_LAYER_NAMES = {
    "CUDAProperties",
    "Device",
    "FuncRepository",
    "KernelizeFallback",
    "LayerRepository",
    "LocalFuncRepository",
    "LocalLayerRepository",
    "LockedFuncRepository",
    "LockedLayerRepository",
    "Mode",
    "ROCMProperties",
    "kernelize",
    "register_kernel_mapping",
    "replace_kernel_forward_from_hub",
    "use_kernel_forward_from_hub",
    "use_kernel_func_from_hub",
    "use_kernel_mapping",
    "use_kernelized_func",
}


def __getattr__(name: str):
    if name in _LAYER_NAMES:
        from . import layers

        return getattr(layers, name)
    raise AttributeError(f"module 'kernelhub' has no attribute {name!r}")


__all__ = [
    "KernelhubError",
    "LoadedKernel",
    "Metadata",
    "RepoInfo",
    "VariantAccepted",
    "VariantRejected",
    "__version__",
    "get_kernel",
    "get_kernel_dep",
    "get_kernel_variants",
    "get_loaded_kernels",
    "get_local_kernel",
    "get_locked_kernel",
    "has_kernel",
    "install_kernel",
    "load_kernel",
    *sorted(_LAYER_NAMES),
]
