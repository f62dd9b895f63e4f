"""Importing a variant of the "zip" build layout (metadata.json `"build-layout": "zip"`), as the
`kernels` package (0.19) does it in kernels/_internals/importer.py: the package is
`<variant>/<id>.zip` with `__init__.py` at its root, imported under the metadata `id` with
`__path__ = [variant directory, archive]`, so that `from . import <id>` finds the native library
beside the archive and every other submodule inside it; `importlib.resources` reads the archive.
The C++ core has already checked the archive (fetch/zip_layout.hpp: whole, every member a file
inside the package) and, with the digest, its bytes."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import zipfile
import zipimport
from pathlib import Path
from types import ModuleType

if sys.version_info >= (3, 11):
    from importlib.resources.abc import TraversableResources
else:  # pragma: no cover - Python 3.10
    from importlib.abc import TraversableResources


class _ZipResourceReader(TraversableResources):
    """Resources of a package stored in a ZIP archive."""

    def __init__(self, zip_path: Path):
        self._zip_path = zip_path

    def files(self):
        return zipfile.Path(self._zip_path)


class _ZipPackageLoader(importlib.abc.Loader):
    """Executes the `__init__.py` at the root of the archive as the package's module."""

    def __init__(self, zip_path: Path):
        self._zip_path = zip_path
        self._importer = zipimport.zipimporter(str(zip_path))

    def create_module(self, spec):
        return None

    def exec_module(self, module: ModuleType) -> None:
        exec(self._importer.get_code("__init__"), module.__dict__)

    def get_source(self, fullname: str) -> str | None:
        return self._importer.get_source("__init__")

    def get_data(self, path: str) -> bytes:
        return self._importer.get_data(path)

    def get_resource_reader(self, fullname: str) -> _ZipResourceReader:
        return _ZipResourceReader(self._zip_path)


def zip_package_spec(variant_path: Path, module_name: str) -> importlib.machinery.ModuleSpec:
    """The spec of the package `<variant_path>/<module_name>.zip`, imported as `module_name`."""
    zip_path = variant_path / f"{module_name}.zip"
    if not zip_path.is_file():
        from .errors import NotFoundError

        raise NotFoundError(
            f"No kernel archive found at: `{zip_path}`: metadata.json says \"build-layout\": \"zip\"; "
            "download the variant again or ask the publisher"
        )
    spec = importlib.machinery.ModuleSpec(
        module_name, _ZipPackageLoader(zip_path), origin=f"{zip_path}/__init__.py", is_package=True
    )
    spec.submodule_search_locations = [str(variant_path), str(zip_path)]
    spec.has_location = True  # __file__ is the archive's __init__.py
    return spec
