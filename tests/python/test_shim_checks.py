"""The checks of every load, as kernels 0.19.1 makes them and never weaker than kernelhub's own
(fetch/internal/kernelhub/fetch/internal/variant_checks.hpp), and the shim's API that came with them: a missing
digest only warns; kernels' verification receipts are never proof for kernelhub and never broken
for kernels; a kernel's minimum `kernels` version is honoured; one import per kernel id;
`check_arch`; UNSTABLE_KERNELS_ALL_LATEST. (The exception classes: test_shim_exceptions.py.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from kernels_releases import kernels_env
from shim_support import child_env, cpu_variant_dir, publish, require_shim, run_json

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

REPO = "acme/reference-kernels"

# Calls pkg.<function>(*args, **kwargs) (argv: package, function, args, kwargs) with the root
# logger collecting records; prints the outcome, what was logged, and the module's file.
CALL = r"""
import json, logging, sys
from pathlib import Path
records = []
class Collect(logging.Handler):
    def emit(self, record):
        records.append(record.getMessage())
logging.getLogger().addHandler(Collect()); logging.getLogger().setLevel(logging.INFO)
pkg = __import__(sys.argv[1])
args = json.loads(sys.argv[3])
if sys.argv[2] == "get_local_kernel":
    args[0] = Path(args[0])
try:
    got = getattr(pkg, sys.argv[2])(*args, **json.loads(sys.argv[4]))
    out = {"file": getattr(got, "__file__", None), "value": got if isinstance(got, bool) else None,
           "name": getattr(got, "__name__", None)}
except Exception as e:
    out = {"error": type(e).__name__, "runtime": isinstance(e, RuntimeError), "str": str(e)}
out["logged"] = records
print(json.dumps(out))
"""


def call(env: dict, package: str, function: str, *args, **kwargs) -> dict:
    return run_json(CALL, env, package, function, json.dumps(args), json.dumps(kwargs))


def copy_variant(target: Path, **metadata_changes) -> Path:
    """A copy of the CPU reference variant in <target>/build/<name>, metadata.json changed."""
    variant = target / "build" / cpu_variant_dir().name
    shutil.copytree(cpu_variant_dir(), variant, ignore=shutil.ignore_patterns("__pycache__"))
    metadata = json.loads((variant / "metadata.json").read_text())
    for key, value in metadata_changes.items():
        if value is None:
            metadata.pop(key, None)
        else:
            metadata[key] = value
    (variant / "metadata.json").write_text(json.dumps(metadata))
    return target


@pytest.fixture(scope="module")
def hub(hub_server):
    require_shim()
    hub_server.commit = publish(hub_server, REPO)
    return hub_server


def receipts(cache: Path) -> dict:
    """kernels' verification receipts under a cache: path → (bytes, modification time)."""
    root = cache / ".verified-kernels"
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))
            if p.is_file()} if root.exists() else {}


def test_a_missing_digest_only_warns(hub, tmp_path):
    local = copy_variant(tmp_path / "no-digest", digest=None)
    env = child_env(hub, tmp_path / "cache")
    ours = call(env, "kernelhub", "get_local_kernel", str(local), backend="cpu")
    theirs = call(kernels_env(env), "kernels", "get_local_kernel", str(local), backend="cpu")
    for got in (ours, theirs):
        assert "error" not in got, got
        assert any("the metadata does not record a digest, so its integrity cannot be verified" in m
                   for m in got["logged"]), got
    assert ours["name"] == theirs["name"]


def test_a_dirty_build_warns_as_kernels_warns(hub, tmp_path):
    dirty = {"kernel-builder": {"version": "0.9.0", "commit": "a" * 40, "dirty": True}, "kernel": None}
    local = copy_variant(tmp_path / "dirty", provenance=dirty)
    env = child_env(hub, tmp_path / "cache")
    for package, e in (("kernelhub", env), ("kernels", kernels_env(env))):
        got = call(e, package, "get_local_kernel", str(local), backend="cpu")
        assert any("was built from a dirty git tree (kernel-builder had uncommitted changes)" in m
                   for m in got["logged"]), (package, got)


def test_receipts_are_no_proof_for_kernelhub_and_stay_kernels_own(hub, tmp_path):
    cache = tmp_path / "cache"
    env = child_env(hub, cache, KERNELHUB_STATE_DIR=str(tmp_path / "state"))
    kernels = kernels_env(env)
    args = (REPO,)
    kwargs = {"version": 1, "backend": "cpu"}
    first = call(kernels, "kernels", "get_kernel", *args, **kwargs)
    assert "error" not in first, first
    written = receipts(cache)
    assert len(written) == 1 and next(iter(written)).startswith("digest/v1/"), written
    # The bytes change after kernels verified them.
    init = Path(first["file"]).resolve()
    init.write_text(init.read_text() + "\n# changed after verification\n")
    # kernels 0.19.1 takes its receipt's word for it and loads the changed files ...
    assert "error" not in call(kernels, "kernels", "get_kernel", *args, **kwargs)
    # ... kernelhub hashes them and refuses, in kernels' words, with a RuntimeError ...
    ours = call(env, "kernelhub", "get_kernel", *args, **kwargs)
    assert ours["error"] == "IntegrityError" and ours["runtime"], ours
    assert "the files do not match the digest in the metadata" in ours["str"], ours
    # ... and leaves the receipt as kernels wrote it, which kernels still reads (it loads the
    # changed files again, on its receipt's word).
    assert receipts(cache) == written
    assert "error" not in call(kernels, "kernels", "get_kernel", *args, **kwargs)


def test_a_receipt_full_of_garbage_is_no_concern_of_kernelhub(hub, tmp_path):
    cache = tmp_path / "cache"
    env = child_env(hub, cache)
    kwargs = {"version": 1, "backend": "cpu"}
    assert "error" not in call(kernels_env(env), "kernels", "get_kernel", REPO, **kwargs)
    (name,) = receipts(cache)
    receipt = cache / ".verified-kernels" / name
    receipt.write_bytes(b"\x00\xffnot a receipt{{" * 100)
    (cache / ".verified-kernels" / "signature").write_text("a file where kernels keeps a directory")
    before = receipts(cache)
    ours = call(env, "kernelhub", "get_kernel", REPO, **kwargs)
    assert "error" not in ours, ours
    assert receipts(cache) == before
    # kernels itself gets over it: it verifies in full and writes a good receipt.
    theirs = call(kernels_env(env), "kernels", "get_kernel", REPO, **kwargs)
    assert "error" not in theirs and any("unusable" in m for m in theirs["logged"]), theirs


@pytest.mark.parametrize("minver, loads", [("0.19.1", True), ("0.9.99", True), ("0.19.2", False), ("1.0.0", False)])
def test_the_kernels_minimum_version(hub, tmp_path, minver, loads):
    local = copy_variant(tmp_path / "k", **{"kernels-minver": minver})
    got = call(child_env(hub, tmp_path / "cache"), "kernelhub", "get_local_kernel", str(local), backend="cpu")
    if loads:
        assert "error" not in got, got
    else:
        assert got["error"] == "ClientTooOldError" and got["runtime"], got
        assert f"requires kernels>={minver}, but kernelhub implements kernels 0.19.1" in got["str"], got


IMPORT_TWICE = r"""
import json, sys, kernelhub
a = kernelhub.get_local_kernel(sys.argv[1], backend="cpu")
b = kernelhub.get_local_kernel(sys.argv[2], backend="cpu")
print(json.dumps({"same": a is b, "name": a.__name__, "file": b.__file__,
                  "loaded": sorted(str(k.module.__file__) for k in kernelhub.get_loaded_kernels())}))
"""


def test_one_import_per_kernel_id(hub, tmp_path):
    # The same build in two directories: the second load gets the module the first imported,
    # as in kernels 0.19.1; both loads are listed.
    first = copy_variant(tmp_path / "first")
    second = copy_variant(tmp_path / "second")
    got = run_json(IMPORT_TWICE, child_env(hub, tmp_path / "cache"), str(first), str(second))
    assert got["same"] and str(first) in got["file"], got
    assert len(got["loaded"]) == 2, got


def test_check_arch(hub, tmp_path):
    # A CUDA variant built for sm_90 only (its metadata says so), on a machine with an sm_80 GPU:
    # refused with check_arch, loaded without (a kernel with a Triton fallback runs there).
    name = cpu_variant_dir().name.replace("-cpu-", "-cu130-")
    local = copy_variant(tmp_path / "k", backend={"type": "cuda", "archs": ["9.0"]})
    publish(hub, "acme/sm90-only", variant=local / "build" / cpu_variant_dir().name, variant_name=name)
    env = child_env(hub, tmp_path / "cache", KERNELHUB_GPUS="8.0", KERNELHUB_CUDA_DRIVER="13.2")
    refused = call(env, "kernelhub", "get_kernel", "acme/sm90-only", version=1)
    assert refused.get("error") == "NoCompatibleVariantError", refused
    assert "built for sm_90; this GPU is sm_80" in refused["str"], refused
    loaded = call(env, "kernelhub", "get_kernel", "acme/sm90-only", version=1, check_arch=False)
    assert "error" not in loaded and f"/{name}/" in loaded["file"], loaded
    assert call(env, "kernelhub", "has_kernel", "acme/sm90-only", version=1)["value"] is False
    assert call(env, "kernelhub", "has_kernel", "acme/sm90-only", version=1, check_arch=False)["value"] is True


def test_all_latest_overrides_versions_and_lock_pins(hub, tmp_path):
    v2 = publish(hub, REPO, version=2)
    lock = tmp_path / "kernels.lock"
    lock.write_text(json.dumps([{"dependency": {"repo-id": REPO, "version": 1}, "lock": {"commit": hub.commit}}]))
    env = child_env(hub, tmp_path / "cache", UNSTABLE_KERNELS_ALL_LATEST="on", KERNELHUB_BACKEND="cpu")
    for function, kwargs in (("get_kernel", {"version": 1}), ("get_locked_kernel", {"lockfile": str(lock)})):
        got = call(env, "kernelhub", function, REPO, **kwargs)
        assert f"/snapshots/{v2}/" in got["file"], (function, got)
        assert any("UNSTABLE_KERNELS_ALL_LATEST is enabled" in m and f"with v2 ({v2})" in m
                   for m in got["logged"]), got
    # install_kernel and get_kernel_variants ignore it, as in kernels.
    got = run_json("import json, kernelhub; print(json.dumps(str(kernelhub.install_kernel("
                   f"{REPO!r}, version=1, backend='cpu'))))", env)
    assert f"/snapshots/{hub.commit}/" in got, got
    # Without it, the version asked for.
    env.pop("UNSTABLE_KERNELS_ALL_LATEST")
    assert f"/snapshots/{hub.commit}/" in call(env, "kernelhub", "get_kernel", REPO, version=1)["file"]
