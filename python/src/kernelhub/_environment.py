"""The environment variables the Python package reads itself, and the only module that reads the
environment. The C++ core reads the rest, once per call (base/environment_source.hpp). Every name
here is an entry of the core's table (base/environment_variables.hpp, docs/ENVIRONMENT.md) whose
`read_by` names python; `value` refuses any other name, as the core does."""

from __future__ import annotations

import functools
import os

from . import _core

HF_HOME = "HF_HOME"
HF_HUB_CACHE = "HF_HUB_CACHE"
KERNELS_CACHE = "KERNELS_CACHE"
KERNELHUB_BACKEND = "KERNELHUB_BACKEND"
LOCAL_KERNELS = "LOCAL_KERNELS"
UNSTABLE_KERNELS_ALL_LATEST = "UNSTABLE_KERNELS_ALL_LATEST"
HF_HUB_DISABLE_PROGRESS_BARS = "HF_HUB_DISABLE_PROGRESS_BARS"

# What could point a get_kernel call at another module than a pinned call of the same arguments
# got (_load.py): the cache location, the backend override, LOCAL_KERNELS and
# UNSTABLE_KERNELS_ALL_LATEST.
PINNED_CALL_VARIABLES = (KERNELS_CACHE, HF_HUB_CACHE, HF_HOME, KERNELHUB_BACKEND, LOCAL_KERNELS,
                         UNSTABLE_KERNELS_ALL_LATEST)


@functools.cache
def _table() -> frozenset[str]:
    return frozenset(entry["name"] for entry in _core.environment_variables())


def value(name: str) -> str | None:
    """The value of `name` now; None when unset or empty, as the core reads it."""
    if name not in _table():
        raise LookupError(f"{name!r} is not an environment variable kernelhub reads: add it to the table in "
                          "base/src/environment_variables.cpp (and docs/ENVIRONMENT.md)")
    return os.environ.get(name) or None


def values(names: tuple[str, ...]) -> tuple[str | None, ...]:
    """The values of `names` now, in their order."""
    return tuple(value(name) for name in names)


def is_truthy(name: str) -> bool:
    """huggingface_hub's truthy set: 1, ON, YES, TRUE, in any case."""
    return (value(name) or "").upper() in ("1", "ON", "YES", "TRUE")
