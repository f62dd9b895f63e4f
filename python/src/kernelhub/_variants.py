"""Build variants as objects of the `kernels` package's shape (kernels 0.19.1:
kernels/_internals/variants.py and backends.py), what get_kernel_variants() returns: an
ArchVariant has `framework`, `backend`, `python` and `system`; a NoarchVariant `framework` and
`backend`; an SdkVariant `backend`, `python` and `system`. Each part has kernels' fields and
`variant_str`, and compares as kernels' does (the name form, legacy or not, is left out). Versions
are packaging's `Version` where packaging is installed (kernels needs it, so it is wherever kernels
is), else a small stand-in with the same `major`, `minor`, `release`, str() and order.

The name is read by the C++ core (resolver/variant.hpp, `_core.parse_variant`); here its parts are
only given their Python shape.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Union


@functools.total_ordering
class _Version:
    """packaging.version.Version's face for "M.m", where packaging is not installed."""

    def __init__(self, text: str) -> None:
        self.release = tuple(int(part) for part in text.split("."))
        self.major, self.minor = self.release[0], self.release[1]

    def __str__(self) -> str:
        return ".".join(str(part) for part in self.release)

    def __repr__(self) -> str:
        return f"<Version('{self}')>"

    def __eq__(self, other: object) -> bool:
        release = getattr(other, "release", None)
        return release is not None and self.release == tuple(release)

    def __lt__(self, other: object) -> bool:
        return self.release < tuple(other.release)

    def __hash__(self) -> int:
        return hash(self.release)


def _version(text: str | None):
    if text is None:
        return None
    try:
        from packaging.version import Version
    except ImportError:
        return _Version(text)
    return Version(text)


def _format_version(legacy_prefix: str, new_prefix: str, version, legacy: bool) -> str:
    if legacy:
        return f"{legacy_prefix}{version.major}{version.minor}"
    return f"{new_prefix}{version.major}.{version.minor}"


# --- frameworks ------------------------------------------------------------------------------------

@dataclass(unsafe_hash=True)
class Torch:
    """Versioned Torch framework (arch variants)."""

    version: object
    cxx11_abi: bool | None
    legacy: bool = field(default=True, compare=False)

    @property
    def variant_str(self) -> str:
        base = _format_version("torch", "torch-", self.version, self.legacy)
        if self.cxx11_abi is None:
            return base
        return f"{base}-{'cxx11' if self.cxx11_abi else 'cxx98'}"


@dataclass(unsafe_hash=True)
class _Versioned:
    """A part written `<prefix><M><m>` (legacy) or `<name>-<M>.<m>`."""

    version: object
    legacy: bool = field(default=True, compare=False)

    _NAME = ""
    _LEGACY_PREFIX = ""

    @property
    def variant_str(self) -> str:
        return _format_version(self._LEGACY_PREFIX, f"{self._NAME}-", self.version, self.legacy)


@dataclass(unsafe_hash=True)
class TorchStableAbi(_Versioned):
    """Stable ABI-versioned Torch framework (arch variants)."""

    _NAME = _LEGACY_PREFIX = "torch-stable-abi"


@dataclass(unsafe_hash=True)
class TvmFfi(_Versioned):
    """Versioned tvm-ffi framework (arch variants)."""

    _NAME = _LEGACY_PREFIX = "tvm-ffi"


@dataclass(unsafe_hash=True)
class TorchNoarch:
    """Versionless Torch framework (noarch variants)."""

    @property
    def variant_str(self) -> str:
        return "torch"


@dataclass(unsafe_hash=True)
class MlxNoarch:
    """Versionless MLX framework (noarch variants)."""

    @property
    def variant_str(self) -> str:
        return "mlx"


# --- backends --------------------------------------------------------------------------------------

@dataclass(unsafe_hash=True)
class _VersionedBackend(_Versioned):
    @property
    def name(self) -> str:
        return self._NAME


@dataclass(unsafe_hash=True)
class _PlainBackend:
    _NAME = ""

    @property
    def name(self) -> str:
        return self._NAME

    @property
    def variant_str(self) -> str:
        return self._NAME


def _backend(class_name: str, name: str, legacy_prefix: str | None = None) -> type:
    """One of kernels' backend classes: versioned (CUDA: `cu128`, `cuda-12.8`) when it has a legacy
    prefix, else a plain name (CPU: `cpu`)."""
    base = _VersionedBackend if legacy_prefix is not None else _PlainBackend
    namespace = {"_NAME": name, "_LEGACY_PREFIX": legacy_prefix or "", "__module__": __name__,
                 "__qualname__": class_name}
    return dataclass(unsafe_hash=True)(type(class_name, (base,), namespace))


CUDA = _backend("CUDA", "cuda", "cu")
ROCm = _backend("ROCm", "rocm", "rocm")
XPU = _backend("XPU", "xpu", "xpu")
CANN = _backend("CANN", "cann", "cann")
CPU = _backend("CPU", "cpu")
Metal = _backend("Metal", "metal")
Neuron = _backend("Neuron", "neuron")
TPU = _backend("TPU", "tpu")


Backend = Union[CPU, CUDA, ROCm, XPU, CANN, Metal, Neuron, TPU]
_BACKENDS = {cls._NAME: cls for cls in (CPU, CUDA, ROCm, XPU, CANN, Metal, Neuron, TPU)}


@dataclass(unsafe_hash=True)
class Noarch:
    """Backend of noarch variants. Only specifies the name of the backend."""

    backend_name: str

    @property
    def variant_str(self) -> str:
        return self.backend_name


# --- the rest of a variant -------------------------------------------------------------------------

@dataclass(unsafe_hash=True)
class Python:
    """The Python version and ABI that the compiled parts of a kernel are built for."""

    version: object = None
    abi: str = "abi3"
    legacy: bool = field(default=True, compare=False)

    def __post_init__(self):
        if self.version is None:
            self.version = _version("3.9")

    @property
    def variant_str(self) -> str:
        if self.legacy:
            return ""
        return f"cpython-{self.version.major}.{self.version.minor}-{self.abi}"


@dataclass(unsafe_hash=True)
class System:
    """The platform (CPU architecture) and OS that compiled parts are built for."""

    platform: str
    os: str

    @property
    def variant_str(self) -> str:
        return f"{self.platform}-{self.os}"


@dataclass(unsafe_hash=True)
class ArchVariant:
    """Arch kernel build variant."""

    framework: Torch | TorchStableAbi | TvmFfi
    backend: Backend
    python: Python
    system: System

    @property
    def variant_str(self) -> str:
        parts = [self.framework.variant_str, self.backend.variant_str]
        if not self.python.legacy:
            parts.append(self.python.variant_str)
        parts.append(self.system.variant_str)
        return "-".join(parts)

    def __str__(self) -> str:
        return self.variant_str


@dataclass(unsafe_hash=True)
class NoarchVariant:
    """Noarch kernel build variant."""

    framework: MlxNoarch | TorchNoarch
    backend: Noarch

    @property
    def variant_str(self) -> str:
        return f"{self.framework.variant_str}-{self.backend.variant_str}"

    def __str__(self) -> str:
        return self.variant_str


@dataclass(unsafe_hash=True)
class SdkVariant:
    """SDK build variant: no framework; `sdk`, `sdk-<backend>`, `sdk-cpython-...` or
    `sdk-<backend>[-<version>]-cpython-...`."""

    backend: Backend | Noarch | None
    python: Python | None
    system: System | None

    @property
    def variant_str(self) -> str:
        parts = ["sdk"]
        if self.backend is not None:
            parts.append(self.backend.variant_str)
        if self.python is not None and not self.python.legacy:
            parts.append(self.python.variant_str)
        if self.system is not None:
            parts.append(self.system.variant_str)
        return "-".join(parts)

    def __str__(self) -> str:
        return self.variant_str


Variant = Union[ArchVariant, NoarchVariant, SdkVariant]


def from_parts(parts: dict) -> Variant:
    """The variant `_core.parse_variant` read, in kernels' shape."""
    legacy = parts["legacy"]
    framework = parts["framework"]
    backend = None
    if parts["backend"] is not None:
        cls = _BACKENDS[parts["backend"]]
        backend = cls(_version(parts["backend_version"]), legacy) if issubclass(cls, _VersionedBackend) else cls()
    python = system = None
    if parts["python_version"] is not None:
        python = Python(_version(parts["python_version"]), parts["python_abi"], legacy)
        system = System(parts["cpu"], parts["os"])
    if framework in ("torch-noarch", "mlx-noarch"):
        return NoarchVariant(TorchNoarch() if framework == "torch-noarch" else MlxNoarch(),
                             Noarch(parts["noarch_backend"]))
    if framework == "sdk":
        if parts["noarch_backend"] is not None:
            backend = Noarch(parts["noarch_backend"])
        return SdkVariant(backend, python, system)
    version = _version(parts["framework_version"])
    if framework == "torch":
        arch_framework = Torch(version, parts["cxx11_abi"], legacy)
    elif framework == "torch-stable-abi":
        arch_framework = TorchStableAbi(version, legacy)
    else:
        arch_framework = TvmFfi(version, legacy)
    return ArchVariant(arch_framework, backend, python, system)


@dataclass(unsafe_hash=True)
class VariantAccepted:
    """A variant that runs here."""

    variant: Variant


@dataclass(unsafe_hash=True)
class VariantRejected:
    """A variant that does not run here, and why."""

    variant: Variant
    reason: str


Decision = Union[VariantAccepted, VariantRejected]
