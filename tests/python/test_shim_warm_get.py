"""A warm get_kernel stays light: with everything cached, the shim imports neither the `tvm_ffi`
package (the tvm-ffi version selection needs is read from its files), nor huggingface_hub, nor
tqdm (a progress bar is made only when a download starts), whatever is installed; a cold one
still draws its bar. bench/python/SHIM_GET.md has what it costs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from shim_support import child_env, publish, require_shim

REPO = "acme/warm-kernels"

# A get_kernel after `import torch` (what a program has done by then; torch.hub imports tqdm itself
# where it is installed): which of the packages a get could pull in the get imported.
GET = r"""
import json, sys
import torch
import kernelhub
before = set(sys.modules)
kernelhub.get_kernel(sys.argv[1], version=1, backend="cpu")
print(json.dumps({"imported": sorted(m for m in ("tvm_ffi", "huggingface_hub", "tqdm")
                                     if m in sys.modules and m not in before)}))
"""

# The decision trace, and whether that imported tvm_ffi.
VARIANTS = r"""
import json, sys
import kernelhub
trace = kernelhub.get_kernel_variants(sys.argv[1], version=1, backend="cpu")
print(json.dumps({"trace": {str(d.variant): getattr(d, "reason", None) for d in trace},
                  "tvm_ffi": "tvm_ffi" in sys.modules}))
"""


@pytest.fixture(scope="module")
def published(hub_server):
    require_shim()
    publish(hub_server, REPO)
    return hub_server


def get(server, cache: Path, **env: str) -> dict:
    out = subprocess.run([sys.executable, "-c", GET, REPO], capture_output=True, text=True, timeout=300,
                         env=child_env(server, cache, **env))
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_warm_get_imports_no_tvm_ffi_huggingface_hub_or_tqdm(published, tmp_path):
    pytest.importorskip("tvm_ffi")  # installed, so that leaving it alone is the shim's doing
    pytest.importorskip("huggingface_hub")
    pytest.importorskip("tqdm")
    cache = tmp_path / "cache"
    cold = get(published, cache, TQDM_POSITION="-1")
    assert "huggingface_hub" in cold["imported"]  # the download drew huggingface_hub's bar
    for env in ({}, {"HF_HUB_DISABLE_PROGRESS_BARS": "1"}):
        assert get(published, cache, **env)["imported"] == [], env


def test_selection_sees_the_installed_tvm_ffi_without_importing_it(published, tmp_path):
    tvm_ffi = pytest.importorskip("tvm_ffi")
    major, minor = (int(part) for part in tvm_ffi.__version__.split(".")[:2])
    here, other = f"tvm-ffi{major}{minor}-cpu-x86_64-linux", f"tvm-ffi{major}{minor + 1}-cpu-x86_64-linux"
    for name in (here, other):
        publish(published, "acme/tvm-ffi-versions", variant_name=name)
    out = subprocess.run([sys.executable, "-c", VARIANTS, "acme/tvm-ffi-versions"], capture_output=True, text=True,
                         timeout=300, env=child_env(published, tmp_path / "cache"))
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["tvm_ffi"] is False
    # kernels' words, with the version tvm_ffi.__version__ says, read from the package's files.
    assert got["trace"][here] is None  # accepted
    assert got["trace"][other] == (f"tvm-ffi version ({major}.{minor + 1}) does not match environment tvm-ffi "
                                   f"version ({major}.{minor})")
