"""Describes a built variant's public API into two files of the variant, read later without importing
anything (`kernels describe-api`, `kernelhub describe-api`):

  symbols.json     what kernel-builder writes after its get_kernel check (schema_version 1): the
                   package's module name, the functions its `__all__` exports and the layer classes
                   `layers.__all__` exports (the package need not import `layers` itself), each with
                   its name, qualname, defining module, kind ("function" or "class"), docstring and
                   signature ({"parameters": [{name, kind, default, annotation}], "return_annotation"},
                   defaults as repr(), annotations as written, never evaluated; null where Python has
                   none), classes with their `has_backward` and `can_torch_compile` (a bool, else null).
                   Names starting with `_`, the `layers` module itself and what a `_private_for_testing`
                   module defines are left out; `__all__` order is kept, duplicates dropped.
  op_schemas.json  kernelhub's: the op namespace and each op's schema as torch prints it, with
                   anonymous alias sets named as the schema language names them (`Tensor(a!)`), which
                   is how the loader prints them (loader/src/op_library.cpp); describe-api turns each
                   into the C++ signature of Kernel::op<...>(). A torch build's only (--framework
                   torch): a tvm-ffi build registers no torch ops (its functions and their
                   signatures are its library's exports, which `kernelhub get` lists).

The variant is imported in this process, as kernels imports it (the module named by metadata `id`),
with bytecode writing off, so nothing but the two files is added to the variant. Nothing exported is
called or instantiated. A failure leaves both files as they were and exits non-zero."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

sys.dont_write_bytecode = True

LAYER_ATTRIBUTES = ("has_backward", "can_torch_compile")


def _text_or_none(value: Any, empty: Any, render: Callable[[Any], str]) -> str | None:
    return None if value is empty else render(value)


def signature_of(obj: Any) -> dict | None:
    try:
        signature = inspect.signature(obj, eval_str=False)
    except (TypeError, ValueError):  # extension functions and some callables have none
        return None
    empty = inspect.Parameter.empty
    return {
        "parameters": [
            {
                "name": p.name,
                "kind": p.kind.name,
                "default": _text_or_none(p.default, empty, repr),
                "annotation": _text_or_none(p.annotation, empty, inspect.formatannotation),
            }
            for p in signature.parameters.values()
        ],
        "return_annotation": _text_or_none(signature.return_annotation, inspect.Signature.empty,
                                           inspect.formatannotation),
    }


def symbol_of(name: str, obj: Any) -> dict:
    is_class = inspect.isclass(obj)
    symbol = {
        "name": name,
        "qualname": obj.__qualname__,
        "module": obj.__module__,
        "kind": "class" if is_class else "function",
        "doc": inspect.getdoc(obj),
        "signature": signature_of(obj),
    }
    if is_class:
        symbol["attributes"] = {}
        for attribute in LAYER_ATTRIBUTES:
            value = getattr(obj, attribute, None)
            symbol["attributes"][attribute] = value if isinstance(value, bool) else None
    return symbol


def exported(module: ModuleType, wanted: Callable[[Any], bool]) -> list[dict]:
    names = getattr(module, "__all__", ())
    if not isinstance(names, (list, tuple)) or any(not isinstance(n, str) for n in names):
        raise ValueError(f"{module.__name__}.__all__ must be a list or tuple of strings")
    symbols = []
    for name in dict.fromkeys(names):
        if name.startswith("_") or name == "layers":
            continue
        try:
            obj = getattr(module, name)
        except AttributeError as e:
            raise ValueError(f"{module.__name__}.__all__ names a missing symbol: {name!r}") from e
        if wanted(obj) and "_private_for_testing" not in obj.__module__.split("."):
            symbols.append(symbol_of(name, obj))
    return symbols


def symbols_of(module: ModuleType) -> dict:
    layers = getattr(module, "layers", None)
    if layers is None and hasattr(module, "__path__"):
        try:
            layers = importlib.import_module(f"{module.__name__}.layers")
        except ModuleNotFoundError as e:
            if e.name != f"{module.__name__}.layers":
                raise
    return {
        "schema_version": 1,
        "module": module.__name__,
        "functions": exported(module, inspect.isfunction),
        "layers": exported(layers, inspect.isclass) if inspect.ismodule(layers) else [],
    }


ANONYMOUS_ALIAS = re.compile(r"\(\$([0-9]+)(!?) -> \)")


def schema_text(schema: Any) -> str:
    """A schema as the loader prints it: `Tensor($0! -> )` (an alias set written `Tensor!`) as `Tensor(a!)`."""
    def name(match: re.Match) -> str:
        index = int(match[1])
        return "(" + (chr(ord("a") + index) if index < 26 else "$" + match[1]) + match[2] + ")"
    return ANONYMOUS_ALIAS.sub(name, str(schema))


def op_schemas_of(namespace: str) -> dict:
    import torch

    prefix = namespace + "::"
    ops = []
    for schema in torch._C._jit_get_all_schemas():
        if schema.name.startswith(prefix):
            text = schema_text(schema)
            name = schema.name[len(prefix):] + (f".{schema.overload_name}" if schema.overload_name else "")
            ops.append({"name": name, "schema": text[len(prefix):] if text.startswith(prefix) else text})
    return {"schema_version": 1, "namespace": namespace, "ops": sorted(ops, key=lambda op: op["name"])}


def import_variant(module_name: str, variant_dir: Path) -> ModuleType:
    init = variant_dir.resolve() / "__init__.py"
    if not init.is_file():
        raise FileNotFoundError(f"no kernel package at {init}")
    spec = importlib.util.spec_from_file_location(module_name, init)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {module_name!r} from {init}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # relative imports need it
    spec.loader.exec_module(module)
    return module


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--variant-dir", type=Path, required=True, help="the assembled variant (its __init__.py)")
    p.add_argument("--id", required=True, help="metadata.json `id`: the module name and the op namespace")
    p.add_argument("--framework", choices=("torch", "tvm-ffi"), default="torch",
                   help="the variant's kind: a tvm-ffi build gets symbols.json alone")
    a = p.parse_args()
    module = import_variant(a.id, a.variant_dir)
    # Both documents are complete before either file is touched.
    symbols = json.dumps(symbols_of(module), indent=2, ensure_ascii=False) + "\n"
    ops = json.dumps(op_schemas_of(a.id), indent=2, ensure_ascii=False) + "\n" if a.framework == "torch" else None
    (a.variant_dir / "symbols.json").write_text(symbols, encoding="utf-8")
    if ops is not None:
        (a.variant_dir / "op_schemas.json").write_text(ops, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
