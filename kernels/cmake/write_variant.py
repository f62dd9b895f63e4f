"""Completes a built variant directory the way kernel-builder lays one out.

Copies the Python files of torch-ext/<package>/, writes _ops.py for the op namespace, then
metadata.json with the digest of every file (kernels-data's Digest::hash_variant rules: every
file below the directory except metadata.json, metadata.json.sigstore and bytecode).
"""

import argparse
import base64
import hashlib
import json
import os
import shutil
import sys

OPS_PY = '''import torch

from . import {ns}

ops = torch.ops.{ns}


def add_op_namespace_prefix(op_name: str) -> str:
    """Prefix op by namespace."""
    return f"{ns}::{{op_name}}"
'''


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


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    p.add_argument("--package-dir", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--id", required=True)
    p.add_argument("--version", type=int, required=True)
    p.add_argument("--backend", required=True)
    p.add_argument("--archs", default="", help="comma-separated, e.g. 8.0,9.0,12.0+PTX")
    p.add_argument("--license", default="Apache-2.0")
    a = p.parse_args()

    # A rebuild after a source change has a new namespace: drop libraries of earlier builds.
    for name in os.listdir(a.dir):
        if name.endswith(".so") and name != a.id + ".abi3.so":
            os.remove(os.path.join(a.dir, name))
    for name in sorted(os.listdir(a.package_dir)):
        src = os.path.join(a.package_dir, name)
        if os.path.isfile(src) and name.endswith((".py", ".pyi")):
            shutil.copyfile(src, os.path.join(a.dir, name))
    with open(os.path.join(a.dir, "_ops.py"), "w") as f:
        f.write(OPS_PY.format(ns=a.id))

    backend = {"type": a.backend}
    if a.archs:
        backend["archs"] = a.archs.split(",")
    metadata = {
        "name": a.name,
        "id": a.id,
        "version": a.version,
        "license": a.license,
        "python-depends": [],
        "backend": backend,
        "digest": {"algorithm": "sha256", "files": digest(a.dir)},
    }
    tmp = os.path.join(a.dir, "metadata.json.tmp")
    with open(tmp, "w") as f:
        json.dump(metadata, f, indent=2)
        f.write("\n")
    os.replace(tmp, os.path.join(a.dir, "metadata.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
