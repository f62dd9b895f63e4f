"""Importing a variant directory as a Python module, the way the `kernels` package does it
(kernels/_internals/importer.py): `build/<variant>/__init__.py` (or `<python_name>/__init__.py`
inside it), or for the "zip" build layout the archive `build/<variant>/<id>.zip` (_zip_package.py),
imported under the metadata `id` (the op namespace) and registered in `sys.modules`
under it. A kernel id imports once per process, as in kernels 0.18+: a later load of the same id
gets the module already imported, once the core has checked that it is the same build (a different
digest raises RuntimeError in kernels' words). get_loaded_kernels() lists what was loaded.

A kernel's dependencies (metadata.json `kernel-depends`) are imported before it, and while its
module runs, get_kernel_dep(repo_id) returns them: kernelhub's, and the `kernels` package's own
`kernels.get_kernel_dep` where kernels is installed, since kernel code calls that one."""

from __future__ import annotations

import contextlib
import contextvars
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
    kernels_minver: str | None = None
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
# The metadata.json text of each kernel id imported here: what a later build with the id is
# checked against.
_loaded_metadata_json: dict[str, str] = {}
# get_kernel releases the GIL while the core works, so threads can arrive here together: one
# imports a variant, the others get its module.
_import_lock = threading.RLock()


def get_loaded_kernels() -> list[LoadedKernel]:
    """Every kernel variant imported in this process (a new list)."""
    return list(_loaded_kernels.values())


# The dependencies of the kernel whose module is running, by repo id; None outside a kernel import.
_kernel_deps: contextvars.ContextVar[dict[str, ModuleType] | None] = contextvars.ContextVar(
    "kernelhub_kernel_deps", default=None
)


def get_kernel_dep(repo_id: str) -> ModuleType:
    """A dependency of the kernel being imported (one its metadata.json `kernel-depends` names),
    already imported; as kernels' get_kernel_dep, callable only while a kernel's module runs."""
    deps = _kernel_deps.get()
    if deps is None:
        raise RuntimeError("`get_kernel_dep` only works during kernel loading.")
    module = deps.get(repo_id)
    if module is None:
        raise RuntimeError(
            f"Dependency '{repo_id}' not found in kernel dependencies. Ensure the dependency is added to "
            "`kernel-deps` in build.toml."
        )
    return module


@contextlib.contextmanager
def _dependencies_visible(deps: dict[str, ModuleType]):
    """While a kernel's module runs: its dependencies for get_kernel_dep, ours and, where the
    kernels package is installed, its own (kernels 0.18+: kernels._internals.deps; 0.17: kernels.deps)."""
    token = _kernel_deps.set(deps)
    with contextlib.ExitStack() as stack:
        if deps:
            for name in ("kernels._internals.deps", "kernels.deps"):
                try:
                    stack.enter_context(importlib.import_module(name).use_kernel_deps(deps))
                    break
                except (ImportError, AttributeError):
                    continue
        try:
            yield
        finally:
            _kernel_deps.reset(token)


def import_variant(fetched: dict, repo_info: RepoInfo | None = None,
                   deps: dict[str, ModuleType] | None = None) -> ModuleType:
    """Imports the variant the core fetched (and verified) as a module named by its metadata `id`;
    `deps` (repo id → module), imported before it, are what its get_kernel_dep calls return."""
    with _import_lock:
        return _import_variant(fetched, repo_info, deps or {})


def _import_variant(fetched: dict, repo_info: RepoInfo | None, deps: dict[str, ModuleType]) -> ModuleType:
    variant_path = Path(fetched["path"])
    metadata = Metadata(**fetched["metadata"])
    module = _imported_build(metadata.id, fetched, variant_path)
    if module is None:
        module = _exec_variant(variant_path, metadata, repo_info, deps)
        if fetched["metadata_json"]:
            _loaded_metadata_json[metadata.id] = fetched["metadata_json"]
    _loaded_kernels[variant_path] = LoadedKernel(metadata=metadata, module=module, repo_info=repo_info)
    return module


def _imported_build(kernel_id: str, fetched: dict, variant_path: Path) -> ModuleType | None:
    """The module already imported under `kernel_id`, when there is one and it is this build."""
    module = sys.modules.get(kernel_id)
    if module is None:
        return None
    loaded_json = _loaded_metadata_json.get(kernel_id) or _metadata_json_beside(module)
    if loaded_json is None:
        # Not a kernel variant we can identify (no metadata.json beside it): reuse it only if it
        # was imported from this very directory.
        return module if _module_dir(module) == variant_path.resolve() else None
    _loaded_metadata_json.setdefault(kernel_id, loaded_json)
    if fetched["metadata_json"]:
        from . import _core
        from .errors import call

        call(_core.check_same_build, loaded_json, fetched["metadata_json"], str(variant_path))
    return module


def _module_dir(module: ModuleType) -> Path | None:
    """The variant directory a kernel module was imported from."""
    file = getattr(module, "__file__", None)
    if file is None:
        return None
    parent = Path(file).resolve().parent  # <variant>/, <variant>/<python_name>/ or <variant>/<id>.zip
    for directory in (parent, parent.parent):
        if (directory / "metadata.json").is_file():
            return directory
    return parent


def _metadata_json_beside(module: ModuleType) -> str | None:
    """metadata.json of the variant a module was imported from (by the kernels package, say)."""
    directory = _module_dir(module)
    try:
        return (directory / "metadata.json").read_text() if directory is not None else None
    except OSError:
        return None


def _exec_variant(variant_path: Path, metadata: Metadata, repo_info: RepoInfo | None,
                  deps: dict[str, ModuleType]) -> ModuleType:
    if metadata.build_layout == "zip":
        spec = zip_package_spec(variant_path, metadata.id)
        file_path = Path(spec.origin)
    else:
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
        spec = importlib.util.spec_from_file_location(metadata.id, file_path)
    if spec is None or spec.loader is None:
        from .errors import LoadError

        raise LoadError(f"Cannot load a module spec for `{metadata.id}` from `{file_path}`")
    module = importlib.util.module_from_spec(spec)
    sys.modules[metadata.id] = module
    try:
        with _dependencies_visible(deps):
            spec.loader.exec_module(module)
    except Exception as e:
        # A retry must import from scratch, not find a half-initialised module.
        sys.modules.pop(metadata.id, None)
        origin = f" ({repo_info.repo_id}, revision: {repo_info.revision})" if repo_info else ""
        if hasattr(e, "add_note"):  # Python 3.11+, as in kernels
            e.add_note(f"while importing kernel '{metadata.name}', variant '{variant_path.name}'{origin}")
        raise
    return module
