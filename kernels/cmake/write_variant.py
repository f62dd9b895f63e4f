"""Assembles a built variant directory the way kernel-builder lays one out.

Copies the op library and the Python files of torch-ext/<package>/ (tvm-ffi-ext/<package>/ for a
tvm-ffi variant), writes _ops.py for the op namespace (kernel-builder's templates: torch.ops.<id>, or
tvm_ffi.load_module of the library), imports the variant to describe its API in symbols.json (and, a
torch variant, op_schemas.json: write_symbols.py), then
metadata.json as kernel-builder writes it (kernels-data metadata.rs `Metadata::for_backend`, then
kernel-builder's `hash` step): the fields of build.toml's [general] (name, version, license,
upstream, source, python-depends and kernel-depends, general and of this backend), the backend and
its archs (sorted, as add_build_metadata.py sorts them), the digest of every file (kernels-data's
Digest::hash_variant rules: every file below the directory except metadata.json,
metadata.json.sigstore and bytecode) and the provenance: which builder made it from which git tree.

The variant is assembled in a fresh folder of --staging-dir and renamed into --dir only when
complete (the previous build moved aside first), so --dir is either absent, the previous build, or
this one: never half of one, even when the build is interrupted. A publisher reading the build
folder meanwhile sees no variant without its metadata.json.
"""

import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib

OPS_PY = '''import torch

from . import {ns}

ops = torch.ops.{ns}


def add_op_namespace_prefix(op_name: str) -> str:
    """Prefix op by namespace."""
    return f"{ns}::{{op_name}}"
'''

# kernel-builder's tvm-ffi _ops.py (templates/tvm_ffi/_ops.py.in) loads the library with tvm_ffi;
# jax and torch hooks are left out (the package's __init__.py wraps the functions for torch).
TVM_FFI_OPS_PY = '''from pathlib import Path
import platform

import tvm_ffi

_SELF_PATH = Path(__file__).parent

if platform.system() == "Darwin":
    ops = tvm_ffi.load_module(_SELF_PATH / "{ns}.dylib")
elif platform.system() == "Windows":
    ops = tvm_ffi.load_module(_SELF_PATH / "{ns}.dll")
else:
    ops = tvm_ffi.load_module(_SELF_PATH / "{ns}.so")


def add_op_namespace_prefix(op_name: str) -> str:
    """Prefix op by namespace."""
    return f"{ns}::{{op_name}}"
'''

# The builder, as metadata.json `provenance.kernel-builder.version` names it: this project's CMake
# build of a kernel-builder project, not kernel-builder itself. Its commit is the kernel's (below).
BUILDER_VERSION = "kernelhub-cmake"


def digest(variant_dir: str) -> dict:
    files = {}
    for root, dirs, names in os.walk(variant_dir):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, variant_dir).replace(os.sep, "/")
            if rel in ("metadata.json", "metadata.json.sigstore") or name.endswith(".pyc"):
                continue
            with open(path, "rb") as f:
                files[rel] = base64.b64encode(hashlib.sha256(f.read()).digest()).decode()
    return dict(sorted(files.items()))


def git_status(source_dir: str) -> dict | None:
    """{commit, dirty} of the git tree holding source_dir, as kernel-builder's ops_identifier.rs
    git_status: HEAD's commit, dirty when tracked files changed (untracked ones do not count).
    None outside a git tree (a source tarball, a Nix build)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", source_dir, *args], capture_output=True, text=True, check=True,
                              timeout=60).stdout
    try:
        commit = git("rev-parse", "--verify", "HEAD").strip()
        dirty = git("status", "--porcelain", "--untracked-files=no", "--ignore-submodules") != ""
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": dirty} if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", commit) else None


def metadata(general: dict, kernel_id: str, backend: str, archs: list[str], files: dict, source: dict | None) -> dict:
    per_backend = general.get(backend, {})
    out = {"name": general["name"], "id": kernel_id, "version": general["version"], "license": general["license"]}
    for key in ("upstream", "source"):
        if key in general:
            out[key] = general[key]
    out["python-depends"] = general.get("python-depends", []) + per_backend.get("python-depends", [])
    out["kernel-depends"] = general.get("kernel-depends", []) + per_backend.get("kernel-depends", [])
    out["backend"] = {"type": backend}
    if archs:
        out["backend"]["archs"] = sorted(set(archs))
    out["digest"] = {"algorithm": "sha256", "files": files}
    builder = {"version": BUILDER_VERSION}
    if source:
        builder.update(source)  # the builder (kernels/CMakeLists.txt, this script) is in the kernel's tree
    out["provenance"] = {"kernel-builder": builder}
    if source:
        out["provenance"]["kernel"] = source
    return out


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--framework", choices=("torch", "tvm-ffi"), default="torch")
    p.add_argument("--library", required=True, help="the op library, named <id>.abi3.so (tvm-ffi: <id>.so)")
    p.add_argument("--dir", required=True, help="the variant directory to create or replace")
    p.add_argument("--staging-dir", required=True, help="where to assemble it (same file system as --dir)")
    p.add_argument("--package-dir", required=True)
    p.add_argument("--build-toml", required=True)
    p.add_argument("--id", required=True)
    p.add_argument("--backend", required=True)
    p.add_argument("--archs", default="", help="comma-separated, e.g. 8.0,9.0,12.0+PTX")
    p.add_argument("--no-describe", action="store_true",
                   help="a library for another machine (a cross build): this Python cannot import it, so "
                        "no symbols.json or op_schemas.json (readers that import nothing go without)")
    a = p.parse_args()

    with open(a.build_toml, "rb") as f:
        general = tomllib.load(f)["general"]
    # CMake names the op namespace _<package>_<backend>_<uid>; build.toml names the kernel.
    expected_prefix = "_{}_{}_".format(general["name"].replace("-", "_"), a.backend)
    if not a.id.startswith(expected_prefix):
        print(f"write_variant.py: id `{a.id}` does not start with `{expected_prefix}` (build.toml name "
              f"`{general['name']}`); make KH_KERNEL_NAME in kernels/CMakeLists.txt match build.toml",
              file=sys.stderr)
        return 1

    library_name = a.id + (".so" if a.framework == "tvm-ffi" else ".abi3.so")
    if os.path.basename(a.library) != library_name:
        print(f"write_variant.py: library `{a.library}` is not named `{library_name}`", file=sys.stderr)
        return 1
    os.makedirs(a.staging_dir, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(a.dir)), exist_ok=True)
    name = os.path.basename(os.path.abspath(a.dir))
    stage = tempfile.mkdtemp(prefix=name + ".", dir=a.staging_dir)
    try:
        assemble(stage, a, general)
        replace_dir(stage, a.dir, a.staging_dir)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return 0


def assemble(stage: str, a: argparse.Namespace, general: dict) -> None:
    tvm_ffi = a.framework == "tvm-ffi"
    shutil.copy2(a.library, os.path.join(stage, a.id + (".so" if tvm_ffi else ".abi3.so")))
    for name in sorted(os.listdir(a.package_dir)):
        src = os.path.join(a.package_dir, name)
        if os.path.isfile(src) and name.endswith((".py", ".pyi")):
            shutil.copyfile(src, os.path.join(stage, name))  # a symlinked file is copied as a file
    with open(os.path.join(stage, "_ops.py"), "w") as f:
        f.write((TVM_FFI_OPS_PY if tvm_ffi else OPS_PY).format(ns=a.id))
    if not a.no_describe:
        # As kernel-builder's get_kernel check: importing the variant must work, and what it exports
        # is written down for readers that import nothing (describe-api, of a tvm-ffi build too). In
        # its own process: it imports torch, or tvm_ffi. A cross build (--no-describe) cannot import
        # a library of another machine.
        described = subprocess.run(
            [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "write_symbols.py"),
             "--variant-dir", stage, "--id", a.id, "--framework", a.framework],
            env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"), capture_output=True, text=True, timeout=600)
        if described.returncode != 0:
            print(f"write_variant.py: importing the assembled variant to describe its API failed:\n"
                  f"{described.stderr[-4000:]}", file=sys.stderr)
            raise SystemExit(1)
    archs = [arch for arch in a.archs.split(",") if arch]
    doc = metadata(general, a.id, a.backend, archs, digest(stage), git_status(os.path.dirname(a.build_toml)))
    with open(os.path.join(stage, "metadata.json"), "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.chmod(stage, 0o755)  # mkdtemp makes it 0700; a variant folder is as readable as any build output


def replace_dir(new: str, target: str, staging_dir: str) -> None:
    """Renames `new` to `target`; a previous `target` is moved into staging_dir first, then removed."""
    if not os.path.exists(target):
        os.rename(new, target)
        return
    old = tempfile.mkdtemp(prefix=os.path.basename(target) + ".old.", dir=staging_dir)
    os.rename(target, os.path.join(old, "variant"))
    try:
        os.rename(new, target)
    except OSError:
        os.rename(os.path.join(old, "variant"), target)  # keep the previous build rather than none
        raise
    finally:
        shutil.rmtree(old, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
