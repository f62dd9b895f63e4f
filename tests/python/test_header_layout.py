"""Where a header lives says who may use it (docs/ARCHITECTURE.md, "Layers"): a layer's
`include/` is the installed API, its `internal/` what the layers above use, included as
`kernelhub/<layer>/internal/x.hpp` so an include line shows that it is internal. No build needed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".cc", ".cu", ".cuh"}
QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s+"(kernelhub[^"]*)"', re.MULTILINE)


def layer_headers(kind: str) -> dict[str, Path]:
    """Include path -> file, for every header under <layer>/<kind>/."""
    found = {}
    for folder in sorted(ROOT.glob(f"*/{kind}")):
        if folder.parent.name.startswith("build") or not folder.is_dir():
            continue
        for path in folder.rglob("*.h*"):
            found[path.relative_to(folder).as_posix()] = path
    return found


def test_internal_headers_are_included_through_an_internal_folder():
    internal = layer_headers("internal")
    assert len(internal) > 50, "the internal headers were not found"
    misplaced = [f"{path.relative_to(ROOT)}" for include, path in internal.items()
                 if include.split("/")[-2] != "internal"]
    assert not misplaced, "internal headers outside an internal/ include folder:\n" + "\n".join(misplaced)


def test_public_headers_name_no_internal_folder():
    public = layer_headers("include")
    assert "kernelhub/kernelhub.hpp" in public
    assert not [include for include in public if "/internal/" in include]


def test_every_kernelhub_include_names_a_header_where_its_path_says():
    """An include line that says internal/ reaches an internal header, and one that does not reaches
    a public one: the two folders cannot be confused by a header moved without its includes."""
    public, internal = layer_headers("include"), layer_headers("internal")
    wrong = []
    for folder in ("base", "binary_format", "client", "resolver", "signing", "sigstore", "fetch", "loader",
                   "tvm_ffi_loader", "tvm_ffi", "kernelhub", "server", "tools", "python/src", "tests", "fuzz",
                   "bench", "examples"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
                continue
            for include in QUOTED_INCLUDE.findall(path.read_text(errors="replace")):
                expected = internal if "/internal/" in include else public
                if include not in expected and not (path.parent / include).exists():
                    wrong.append(f"{path.relative_to(ROOT)}: \"{include}\"")
    assert not wrong, "includes that name no header where their path says:\n" + "\n".join(wrong)
