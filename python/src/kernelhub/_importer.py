"""Importing a variant directory as a Python module, the way the `kernels` package does it
(kernels/importer.py): `build/<variant>/__init__.py` (or `<python_name>/__init__.py` inside it), or
for the "zip" build layout the archive `build/<variant>/<id>.zip` (_zip_package.py), imported under
the metadata `id` (the op namespace) and registered in `sys.modules` under it.
The same variant path imports once per process; get_loaded_kernels() lists what was imported."""

from __future__ import annotations

import importlib.util
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from ._zip_package import zip_package_spec


@dataclass(frozen=True)
class RepoInfo:
    """Where a kernel came from: the Hub repo and the commit it was loaded at."""

    repo_id: str
    revision: str


@dataclass(frozen=True)
class Metadata:
    """A variant's metadata.json, as the C++ core read it: `id` is the module name and the torch
    op namespace."""

    id: str
    name: str
    version: int | None = None
    license: str | None = None
    upstream: str | None = None
    source: str | None = None
    python_depends: list = field(default_factory=list)
    backend: dict = field(default_factory=dict)
    build_layout: str = "files"  # or "zip" (metadata.json `build-layout`)

    @property
    def python_name(self) -> str:
        return self.name.replace("-", "_")

    @staticmethod
    def read_from_file(path: Path) -> "Metadata":
        from . import _core
        from .errors import call

        return Metadata(**call(_core.parse_metadata, Path(path).read_text()))


@dataclass(frozen=True)
class LoadedKernel:
    """A kernel imported into this process; `repo_info` is set only for get_kernel loads."""

    metadata: Metadata
    module: ModuleType
    repo_info: RepoInfo | None


_loaded_kernels: dict[Path, LoadedKernel] = {}
# get_kernel releases the GIL while the core works, so threads can arrive here together: one
# imports a variant, the others get its module.
_import_lock = threading.RLock()


def get_loaded_kernels() -> list[LoadedKernel]:
    """Every kernel variant imported in this process (a new list)."""
    return list(_loaded_kernels.values())


def import_variant(fetched: dict, repo_info: RepoInfo | None = None) -> ModuleType:
    """Imports the variant the core fetched (and verified) as a module named by its metadata `id`."""
    with _import_lock:
        return _import_variant(fetched, repo_info)


def _import_variant(fetched: dict, repo_info: RepoInfo | None) -> ModuleType:
    variant_path = Path(fetched["path"])
    if (loaded := _loaded_kernels.get(variant_path)) is not None:
        return loaded.module

    metadata = Metadata(**fetched["metadata"])
    if metadata.build_layout == "zip":
        zip_spec = zip_package_spec(variant_path, metadata.id)
        file_path = Path(zip_spec.origin)
    else:
        zip_spec = None
        file_path = variant_path / "__init__.py"
        if not file_path.exists():
            file_path = variant_path / metadata.python_name / "__init__.py"
        if not file_path.exists():
            from .errors import NotFoundError

            raise NotFoundError(
                f"No kernel module found at `{variant_path}`: neither __init__.py nor "
                f"{metadata.python_name}/__init__.py; the variant directory is not a Python package "
                "(republish it with kernel-builder)"
            )

    existing = sys.modules.get(metadata.id)
    existing_file = getattr(existing, "__file__", None) if existing is not None else None
    if existing_file is not None and _same_file(Path(existing_file), file_path):
        # Already imported from this very file (by the kernels package, say): share it, do not
        # execute the module twice.
        module = existing
    else:
        spec = zip_spec or importlib.util.spec_from_file_location(metadata.id, file_path)
        if spec is None or spec.loader is None:
            from .errors import LoadError

            raise LoadError(f"Cannot load a module spec for `{metadata.id}` from `{file_path}`")
        module = importlib.util.module_from_spec(spec)
        sys.modules[metadata.id] = module
        try:
            spec.loader.exec_module(module)
        except Exception as e:
            # A retry must import from scratch, not find a half-initialised module.
            sys.modules.pop(metadata.id, None)
            origin = f" ({repo_info.repo_id}, revision: {repo_info.revision})" if repo_info else ""
            if hasattr(e, "add_note"):  # Python 3.11+, as in kernels
                e.add_note(f"while importing kernel '{metadata.name}', variant '{variant_path.name}'{origin}")
            raise

    _loaded_kernels[variant_path] = LoadedKernel(metadata=metadata, module=module, repo_info=repo_info)
    return module


def _same_file(a: Path, b: Path) -> bool:
    """Whether two module origins name one file; a zip member's (`<archive>/__init__.py`) by its archive."""
    if a.name == b.name == "__init__.py" and a.parent.suffix == b.parent.suffix == ".zip":
        a, b = a.parent, b.parent
    return a.resolve() == b.resolve()
