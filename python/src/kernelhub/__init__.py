"""kernelhub: a drop-in for the `kernels` package's loader, backed by kernelhub's C++ core.

    from kernelhub import get_kernel          # instead of: from kernels import get_kernel

    rms = get_kernel("kernels-community/rmsnorm", version=1)

Same functions, signatures, return values (the variant's module, imported under its metadata
`id`, once per id), exception types and environment variables as kernels 0.19.1; every rule
(LOCAL_KERNELS, UNSTABLE_KERNELS_ALL_LATEST, lock files, revision or version, resolution, variant
selection, download, the checks of every load, metadata.json) is the C++ core's, run with the GIL
released. kernelize, the layer repositories and the Kernelized* introspection are in
kernelhub.layers (re-exported here; they need the `kernels` package, `kernelhub[kernels]`).
KERNELS_COMPATIBLE_VERSION is the kernels release whose loading behaviour kernelhub implements: a
kernel whose metadata.json asks for a newer one (`kernels-minver`) is refused, as kernels refuses
it, with ClientTooOldError (a RuntimeError).

Importing kernelhub is cheap: the C++ core links no torch, so one build fits every torch; torch is
read (as kernels reads it) at the first call that selects a variant, and the kernelize API is
imported on first access.

Where kernelhub differs from kernels 0.19.1 on purpose:
- with a CUDA torch and no CUDA driver, `backend=None` selects cpu (kernels picks CUDA, which
  cannot run there); with `check_arch` (the default) CUDA variants are fitted to the visible GPUs
  by the device code in their library too, not only by the archs metadata.json declares;
- every load verifies the variant's files against metadata.json `digest` (and against a lock
  file's per-variant hash, kernels <= 0.16 format, when it has one) before importing them, a Hub
  kernel too: kernels skips one it verified before on the word of its receipt
  (<cache>/.verified-kernels/), which says nothing about the bytes on disk now; kernelhub skips
  only files proven unchanged since its own verification, and get_kernel at a full commit returns
  the module it already imported in this process;
- `user_agent` is accepted and not sent;
- LOCAL_KERNELS entries are checked as the C++ core checks them: each repo id must be `org/name`
  and each path non-empty; empty entries are skipped.
"""

from ._importer import LoadedKernel, Metadata, RepoInfo, get_kernel_dep, get_loaded_kernels
from ._load import (
    get_kernel,
    get_kernel_variants,
    get_local_kernel,
    get_locked_kernel,
    has_kernel,
    install_kernel,
    load_kernel,
)
from ._core import KERNELS_COMPATIBLE_VERSION
from .errors import KernelhubError

__version__ = "0.1.0"

# Served by kernelhub.layers, imported on first access (it imports the kernels package).
_LAYER_NAMES = {
    "CUDAProperties",
    "Device",
    "FuncRepository",
    "KernelizeFallback",
    "KernelizedFunc",
    "KernelizedLayer",
    "KernelizedLayers",
    "LayerRepository",
    "LocalFuncRepository",
    "LocalLayerRepository",
    "LockedFuncRepository",
    "LockedLayerRepository",
    "Mode",
    "ROCMProperties",
    "get_kernelized_layers",
    "kernelize",
    "register_kernel_mapping",
    "replace_kernel_forward_from_hub",
    "use_kernel_forward_from_hub",
    "use_kernel_func_from_hub",
    "use_kernel_mapping",
    "use_kernelized_func",
}


# Served by kernelhub._variants (get_kernel_variants' classes), imported on first access.
_VARIANT_NAMES = {"VariantAccepted", "VariantRejected"}


def __getattr__(name: str):
    if name in _LAYER_NAMES:
        from . import layers

        return getattr(layers, name)
    if name in _VARIANT_NAMES:
        from . import _variants

        return getattr(_variants, name)
    raise AttributeError(f"module 'kernelhub' has no attribute {name!r}")


__all__ = [
    "KERNELS_COMPATIBLE_VERSION",
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
