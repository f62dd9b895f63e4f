"""Running the `kernels` package as it runs where torch is a CPU build.

This machine's torch is a CUDA build and there is no CUDA driver: kernelhub then selects CPU
variants (README: "CPU variants when torch has CUDA but no driver"), kernels selects CUDA ones, which
cannot run here. To compare the two on the CPU variants we publish, the `kernels` side runs with a
sitecustomize that makes the imported torch report no CUDA, as a CPU build of the same torch would."""

from __future__ import annotations

import os
from pathlib import Path

SITECUSTOMIZE = "import torch\ntorch.version.cuda = None\n"


def as_cpu_torch(env: dict, scratch: Path) -> dict:
    """`env` for a child that runs kernels (its CLI or its API) as on a CPU build of this torch."""
    site = scratch / "cpu-torch-site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = dict(env)
    env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])
    return env
