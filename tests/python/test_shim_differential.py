"""kernelhub (the Python shim) against the `kernels` package, on the same repos of one
`kernelhub serve`: the same variant chosen, the same module (name, attributes, op results), the
same exception types and comparable messages for a missing repo, a missing version, no compatible
variant, an offline miss and an untrusted publisher; and the same answers from has_kernel,
get_kernel_variants, install_kernel and the lock-file loaders. Every call runs in a child
interpreter configured for the server (see shim_support.py)."""

from __future__ import annotations

import json

import pytest
from huggingface_hub import CommitOperationAdd, HfApi
from shim_support import child_env, cpu_variant_dir, fresh, publish, require_shim, requests_in_log, run_json

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# Loads a kernel with one package, calls an op and describes the result.
LOAD = r"""
import json, sys
from pathlib import Path
import torch
pkg = __import__(sys.argv[1])
module = getattr(pkg, sys.argv[2])(sys.argv[3], **json.loads(sys.argv[4]))
torch.manual_seed(0)
x, w = torch.randn(4, 64), torch.rand(64) + 0.5
y = module.rms_norm(x, w, 1e-6)
a, b = torch.randn(3, 8), torch.randn(3, 8)
# str: kernels 0.18+ gives the revision as an Oid, kernelhub as the commit's text.
loaded = [(k.metadata.id, str(k.repo_info.revision) if k.repo_info else None) for k in pkg.get_loaded_kernels()]
print(json.dumps({
    "module": module.__name__,
    "variant": Path(module.__file__).parent.name,
    "file": module.__file__,
    "attrs": sorted(a for a in dir(module) if not a.startswith("__")),
    "rms_norm": y.flatten().tolist(),
    "layers": sorted(a for a in dir(module.layers) if not a.startswith("_")),
    "loaded": loaded,
}))
"""

# Calls one function of each package with the same arguments; reports what each raised.
BOTH_RAISE = r"""
import json, sys
import kernelhub, kernels
function, repo, kwargs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
def attempt(pkg):
    try:
        getattr(pkg, function)(repo, **kwargs)
    except Exception as e:
        return e
    return None
ours = attempt(kernelhub)   # first, so it cannot profit from what kernels left in the cache
theirs = attempt(kernels)
describe = lambda e: None if e is None else {"type": type(e).__name__, "str": str(e),
                                             "mro": [c.__name__ for c in type(e).__mro__]}
print(json.dumps({"ours": describe(ours), "theirs": describe(theirs),
                  "ours_is_theirs": theirs is not None and isinstance(ours, type(theirs))}))
"""

# Calls one function of each package with the same arguments; reports what each returned.
BOTH_RETURN = r"""
import json, sys
import kernelhub, kernels
function, repo, kwargs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
def show(value):
    if isinstance(value, list):  # decision traces
        return [[type(d).__name__, d.variant.variant_str] for d in value]
    return str(value)
print(json.dumps({"ours": show(getattr(kernelhub, function)(repo, **kwargs)),
                  "theirs": show(getattr(kernels, function)(repo, **kwargs))}))
"""

NO_FIT_VARIANT = "torch215-cxx11-cpu-aarch64-linux"  # the x86_64 library under an aarch64 name
OTHER_TORCH_VARIANT = "torch29-cxx11-cpu-x86_64-linux"  # the library under another torch's name

# kernels selects the backend torch was built for (CUDA for the PyPI wheel) even on a machine
# without a GPU, where kernelhub selects cpu; name it, so both packages choose among the same.
CPU = {"backend": "cpu"}


@pytest.fixture(scope="module")
def hub(hub_server):
    require_shim()
    hub_server.commit = publish(hub_server, "acme/reference-kernels")
    publish(hub_server, "alice/reference-kernels")
    publish(hub_server, "acme/aarch64-only", variant_name=NO_FIT_VARIANT)
    publish(hub_server, "acme/other-torch-only", variant_name=OTHER_TORCH_VARIANT)
    return hub_server


def load(hub, tmp_path, package, repo, function="get_kernel", offline=False, cache=None, **kwargs):
    env = child_env(hub, cache or tmp_path / f"cache-{package}", offline=offline)
    return run_json(LOAD, env, package, function, repo, json.dumps(kwargs))


def both_raise(hub, cache, function, repo, offline=False, **kwargs):
    got = run_json(BOTH_RAISE, child_env(hub, cache, offline=offline), function, repo, json.dumps(kwargs))
    assert got["ours"] is not None and got["theirs"] is not None, got
    return got


@pytest.mark.parametrize("how", ["version", "revision"])
def test_same_variant_module_and_op_results(hub, tmp_path, how):
    kwargs = {"version": 1, **CPU} if how == "version" else {"revision": hub.commit, **CPU}
    ours = load(hub, tmp_path, "kernelhub", "acme/reference-kernels", **kwargs)
    theirs = load(hub, tmp_path, "kernels", "acme/reference-kernels", **kwargs)
    assert ours["variant"] == theirs["variant"] == cpu_variant_dir().name
    assert ours["module"] == theirs["module"]  # the metadata id, which is also the op namespace
    assert ours["attrs"] == theirs["attrs"] and "rms_norm" in ours["attrs"]
    assert ours["layers"] == theirs["layers"]
    assert ours["rms_norm"] == theirs["rms_norm"]  # bit for bit: the same library did the work
    assert ours["loaded"] == [[ours["module"], hub.commit]]
    assert theirs["loaded"] == [[theirs["module"], hub.commit]]
    # Both in the same Hugging Face cache layout, at the same snapshot path.
    assert ours["file"].split("cache-kernelhub/")[1] == theirs["file"].split("cache-kernels/")[1]


def test_missing_repo(hub, tmp_path):
    got = both_raise(hub, tmp_path / "cache", "get_kernel", "acme/no-such-kernel", version=1, **CPU)
    assert got["theirs"]["type"] == "RepositoryNotFoundError"
    assert got["ours_is_theirs"], got
    assert "KernelhubError" in got["ours"]["mro"]
    assert "acme/no-such-kernel" in got["ours"]["str"] and "not found" in got["ours"]["str"]


def test_missing_version(hub, tmp_path):
    got = both_raise(hub, tmp_path / "cache", "get_kernel", "acme/reference-kernels", version=7, **CPU)
    assert got["theirs"]["type"] == "ValueError" and got["ours_is_theirs"], got
    for side in ("ours", "theirs"):
        assert got[side]["str"].startswith("Version 7") and "not found, available versions" in got[side]["str"]


def test_missing_revision(hub, tmp_path):
    got = both_raise(hub, tmp_path / "cache", "get_kernel", "acme/reference-kernels", revision="no-such-branch",
                     **CPU)
    assert got["theirs"]["type"] == "RevisionNotFoundError" and got["ours_is_theirs"], got
    assert "no-such-branch" in got["ours"]["str"]


def test_neither_or_both_of_version_and_revision(hub, tmp_path):
    got = both_raise(hub, tmp_path / "cache", "get_kernel", "acme/reference-kernels")
    assert got["ours"]["str"] == got["theirs"]["str"] and got["ours_is_theirs"], got
    got = both_raise(hub, tmp_path / "cache", "get_kernel", "acme/reference-kernels", version=1, revision="v1")
    assert got["ours"]["str"] == got["theirs"]["str"] and got["ours_is_theirs"], got


def test_no_compatible_variant(hub, tmp_path):
    got = both_raise(hub, tmp_path / "cache", "get_kernel", "acme/aarch64-only", version=1, **CPU)
    assert got["theirs"]["type"] == "FileNotFoundError" and got["ours_is_theirs"], got
    for side in ("ours", "theirs"):
        message = got[side]["str"]
        assert "Cannot find a build variant for this system in" in message and "acme/aarch64-only" in message
        assert NO_FIT_VARIANT in message  # the decision trace names the rejected variant


def test_no_variant_for_this_torch(hub, tmp_path):
    # Built for another torch only: the torch-free core, given the torch this interpreter imported,
    # rejects it as kernels does, with kernels' exception type and words.
    got = both_raise(hub, tmp_path / "cache", "get_kernel", "acme/other-torch-only", version=1, **CPU)
    assert got["theirs"]["type"] == "FileNotFoundError" and got["ours_is_theirs"], got
    for side in ("ours", "theirs"):
        message = got[side]["str"]
        assert "Cannot find a build variant for this system in" in message and OTHER_TORCH_VARIANT in message
    got = run_json(BOTH_RETURN, child_env(hub, tmp_path / "cache"), "get_kernel_variants", "acme/other-torch-only",
                   json.dumps({"version": 1, **CPU}))
    assert got["ours"] == got["theirs"] == [["VariantRejected", OTHER_TORCH_VARIANT]], got


@pytest.mark.parametrize("how", ["version", "revision"])
def test_offline_miss(hub, tmp_path, how):
    kwargs = {"version": 1, **CPU} if how == "version" else {"revision": hub.commit, **CPU}
    before = requests_in_log(hub)
    got = both_raise(hub, fresh(tmp_path / "empty-cache"), "get_kernel", "acme/reference-kernels", offline=True,
                     **kwargs)
    assert got["theirs"]["type"] == ("ValueError" if how == "version" else "FileNotFoundError")
    assert got["ours_is_theirs"], got
    assert got["ours"]["type"] == "OfflineMissError"
    assert "offline" in got["ours"]["str"].lower() and "offline" in got["theirs"]["str"].lower()
    assert requests_in_log(hub) == before  # neither asked the server anything


def test_untrusted_publisher(hub, tmp_path):
    cache = tmp_path / "cache"
    got = both_raise(hub, cache, "get_kernel", "alice/reference-kernels", version=1, **CPU)
    assert got["theirs"]["type"] == "ValueError" and got["ours_is_theirs"], got
    assert got["ours"]["type"] == "UntrustedPublisherError"
    for side in ("ours", "theirs"):
        assert "alice/reference-kernels" in got[side]["str"] and "trust" in got[side]["str"]
    got = both_raise(hub, cache, "has_kernel", "alice/reference-kernels", version=1, **CPU)  # asks first, too
    assert got["theirs"]["type"] == "ValueError" and got["ours_is_theirs"], got
    blobs = cache / "kernels--alice--reference-kernels" / "blobs"
    assert not blobs.exists() or not any(blobs.iterdir())  # nothing of it was downloaded
    # Opting in, per call or per repo, loads it with both.
    for trust in (True, ["alice/reference-kernels"]):
        ours = load(hub, tmp_path, "kernelhub", "alice/reference-kernels", version=1, trust_remote_code=trust, **CPU)
        assert ours["variant"] == cpu_variant_dir().name


def test_has_kernel_and_variants_agree(hub, tmp_path):
    env = child_env(hub, tmp_path / "cache")
    for repo, expected in (("acme/reference-kernels", "True"), ("acme/aarch64-only", "False")):
        got = run_json(BOTH_RETURN, env, "has_kernel", repo, json.dumps({"version": 1, **CPU}))
        assert got["ours"] == got["theirs"] == expected, (repo, got)
        got = run_json(BOTH_RETURN, env, "get_kernel_variants", repo, json.dumps({"version": 1, **CPU}))
        assert got["ours"] == got["theirs"], got


def test_install_kernel_shares_the_cache_with_kernels(hub, tmp_path):
    cache = tmp_path / "cache"
    env = child_env(hub, cache)
    got = run_json(BOTH_RETURN, env, "install_kernel", "acme/reference-kernels", json.dumps({"version": 1, **CPU}))
    assert got["ours"] == got["theirs"], got
    assert got["ours"].endswith(f"snapshots/{hub.commit}/build/{cpu_variant_dir().name}")
    # What kernelhub downloaded, kernels finds in the cache: it downloads no file again ...
    fresh(cache)
    script = ("import json, kernelhub; print(json.dumps(str(kernelhub.install_kernel("
              "'acme/reference-kernels', version=1, backend='cpu'))))")
    path = run_json(script, env)
    log_before = len(hub.log().splitlines())
    theirs = run_json(LOAD, env, "kernels", "get_kernel", "acme/reference-kernels", json.dumps({"version": 1, **CPU}))
    assert theirs["file"] == f"{path}/__init__.py"
    file_gets = [line for line in hub.log().splitlines()[log_before:] if line.startswith("GET") and "/resolve/" in line]
    assert file_gets == [], file_gets
    # ... and what kernels downloaded, kernelhub loads offline, with no request (by commit:
    # kernels resolves v1 through the refs API and writes no refs/v1 into the cache).
    fresh(cache)
    run_json(LOAD, env, "kernels", "get_kernel", "acme/reference-kernels", json.dumps({"version": 1, **CPU}))
    before = requests_in_log(hub)
    ours = load(hub, tmp_path, "kernelhub", "acme/reference-kernels", offline=True, cache=cache,
                revision=hub.commit, **CPU)
    assert ours["variant"] == cpu_variant_dir().name
    assert requests_in_log(hub) == before


def write_lock(path, commit: str):
    path.write_text(json.dumps([{"dependency": {"repo-id": "acme/reference-kernels", "version": 1},
                                 "lock": {"commit": commit}}]))
    return path


def test_lock_file_loaders(hub, tmp_path):
    cache = tmp_path / "cache"
    lock = write_lock(tmp_path / "kernels.lock", hub.commit)
    # load_kernel never downloads: both fail the same way on an empty cache ...
    got = both_raise(hub, fresh(cache), "load_kernel", "acme/reference-kernels", lockfile=str(lock), **CPU)
    assert got["ours_is_theirs"], got
    # ... get_locked_kernel downloads the locked commit ...
    ours = load(hub, tmp_path, "kernelhub", "acme/reference-kernels", function="get_locked_kernel",
                lockfile=str(lock))
    assert ours["loaded"] == [[ours["module"], hub.commit]]  # a RepoInfo for every load from the Hub
    # ... after which load_kernel loads it with no request. kernels 0.17.2's load_kernel (through
    # huggingface_hub 2.4's offline snapshot_download) also wants the repo's other files
    # (.gitattributes), so complete the snapshot for it first.
    env_cache = tmp_path / "cache-kernelhub"
    HfApi(endpoint=hub.url, token=hub.read_token).snapshot_download(
        "acme/reference-kernels", repo_type="kernel", revision=hub.commit, cache_dir=str(env_cache))
    before = requests_in_log(hub)
    for package in ("kernelhub", "kernels"):
        got = run_json(LOAD, child_env(hub, env_cache), package, "load_kernel", "acme/reference-kernels",
                       json.dumps({"lockfile": str(lock), **CPU}))
        assert got["variant"] == cpu_variant_dir().name and got["module"] == ours["module"]
    assert requests_in_log(hub) == before
    # A repo the lock does not list: the same ValueError.
    got = both_raise(hub, env_cache, "load_kernel", "acme/unlocked", lockfile=str(lock), **CPU)
    assert got["theirs"]["type"] == "ValueError" and got["ours_is_theirs"], got
    assert got["ours"]["str"] == got["theirs"]["str"]


def test_without_a_gpu_the_cpu_variant_is_chosen_without_asking(hub, tmp_path):
    # A known, deliberate difference: kernels picks torch's build backend (CUDA) even with no
    # CUDA driver; kernelhub selects cpu there, so backend=None works on a CPU-only machine.
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is visible: kernelhub selects the CUDA backend, which this repo does not have")
    ours = load(hub, tmp_path, "kernelhub", "acme/reference-kernels", version=1)
    assert ours["variant"] == cpu_variant_dir().name


def test_local_kernels_override(hub, tmp_path):
    # LOCAL_KERNELS=repo=path: both load the local build instead of asking the Hub.
    local = cpu_variant_dir().parent.parent  # build/kernels, holding build/<variant>/
    before = requests_in_log(hub)
    for package in ("kernelhub", "kernels"):
        env = child_env(hub, tmp_path / "cache", LOCAL_KERNELS=f"acme/not-on-the-hub={local}")
        got = run_json(LOAD, env, package, "get_kernel", "acme/not-on-the-hub", json.dumps({"version": 1, **CPU}))
        assert got["file"] == str(cpu_variant_dir() / "__init__.py"), (package, got)
    assert requests_in_log(hub) == before
    env = child_env(hub, tmp_path / "cache", LOCAL_KERNELS="no-equals-sign")
    got = run_json(BOTH_RAISE, env, "get_kernel", "acme/reference-kernels", json.dumps({"version": 1, **CPU}))
    assert got["theirs"]["type"] == "ValueError" and got["ours_is_theirs"], got
    assert got["ours"]["str"] == got["theirs"]["str"]


def test_a_lock_hash_that_does_not_match_is_refused(hub, tmp_path):
    # kernels 0.17 no longer checks the per-variant lock hash (kernels <= 0.16 format); kernelhub does.
    lock = tmp_path / "kernels.lock"
    lock.write_text(json.dumps([{"repo_id": "acme/reference-kernels", "sha": hub.commit, "variants": {
        cpu_variant_dir().name: {"hash": "sha256-" + "0" * 64, "hash_type": "git_lfs_concat"}}}]))
    script = ("import json, kernelhub\n"
              "try:\n"
              f"    kernelhub.get_locked_kernel('acme/reference-kernels', lockfile={str(lock)!r})\n"
              "    print(json.dumps(None))\n"
              "except Exception as e:\n"
              "    print(json.dumps([type(e).__name__, isinstance(e, RuntimeError), str(e)]))\n")
    got = run_json(script, child_env(hub, tmp_path / "cache", KERNELHUB_BACKEND="cpu"))
    assert got is not None and got[0] == "IntegrityError" and got[1], got
    assert "lock" in got[2] and cpu_variant_dir().name in got[2], got


def test_pure_python_variant(hub, tmp_path):
    # A torch-universal variant (Python only, no op library): kernels imports it, and so must
    # kernelhub, although the C++ core alone (a process without Python) would not select it.
    variant = tmp_path / "torch-universal"
    variant.mkdir()
    (variant / "__init__.py").write_text("def answer():\n    return 42\n")
    (variant / "metadata.json").write_text(json.dumps({
        "name": "universal-only", "id": "_universal_only_0000001", "version": 1, "license": "Apache-2.0",
        "python-depends": [], "backend": {"type": "cpu"}}))
    publish(hub, "acme/universal-only", variant=variant)
    script = ("import json, sys, pathlib\n"
              "pkg = __import__(sys.argv[1])\n"
              "m = pkg.get_kernel('acme/universal-only', version=1, backend='cpu')\n"
              "print(json.dumps([m.__name__, pathlib.Path(m.__file__).parent.name, m.answer()]))\n")
    got = {package: run_json(script, child_env(hub, tmp_path / f"cache-{package}"), package)
           for package in ("kernelhub", "kernels")}
    assert got["kernelhub"] == got["kernels"] == ["_universal_only_0000001", "torch-universal", 42], got


# get_kernel_variants' objects, described field by field (kernels' dataclasses and ours alike):
# {"<class>": {field: ..., "variant_str": ...}}, versions as their text.
DESCRIBE_VARIANTS = r"""
import dataclasses, json, sys
import kernelhub, kernels
repo, kwargs = sys.argv[1], json.loads(sys.argv[2])
def describe(value):
    if dataclasses.is_dataclass(value):
        fields = {f.name: describe(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if hasattr(value, "variant_str"):
            fields["variant_str"] = value.variant_str
        if hasattr(value, "name") and "name" not in fields:
            fields["name"] = value.name
        return {type(value).__name__: fields}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)  # a Version
ours = kernelhub.get_kernel_variants(repo, **kwargs)
theirs = kernels.get_kernel_variants(repo, **kwargs)
print(json.dumps({"ours": [describe(d) for d in ours], "theirs": [describe(d) for d in theirs],
                  "first_framework": type(ours[0].variant.framework).__name__}))
"""

# One folder of every shape kernels 0.19.1 parses, and one name it does not parse (left out, with a
# warning, by both).
SHAPES = ["torch-2.15-cxx11-cpu-cpython-3.9-abi3-x86_64-linux", "torch29-cxx11-cu128-x86_64-linux",
          "torch-stable-abi211-cu126-x86_64-linux", "tvm-ffi01-cu126-x86_64-linux",
          "tvm-ffi-0.1-rocm-7.1-cpython-3.12-abi3-x86_64-linux", "torch-universal", "torch-cuda", "mlx-metal",
          "sdk", "sdk-cuda", "sdk-cuda-12.8-cpython-3.12-abi3-x86_64-linux", "sdk-cpython-3.10-abi3-x86_64-linux",
          "torch210-xpu20253-x86_64-linux", "not-a-variant"]


def test_get_kernel_variants_returns_kernels_objects(hub, tmp_path):
    # One commit: each shape a folder holding the CPU variant's metadata.json (a listing is all
    # get_kernel_variants reads), and the CPU variant itself, the one that runs here.
    api = HfApi(endpoint=hub.url, token=hub.write_token)
    api.create_repo("acme/variant-shapes", repo_type="kernel", exist_ok=True)
    api.create_branch("acme/variant-shapes", repo_type="kernel", branch="v1", exist_ok=True)
    metadata = str(cpu_variant_dir() / "metadata.json")
    api.create_commit("acme/variant-shapes", repo_type="kernel", revision="v1", commit_message="shapes",
                      operations=[CommitOperationAdd(path_in_repo=f"build/{name}/metadata.json", path_or_fileobj=metadata)
                                  for name in SHAPES])
    publish(hub, "acme/variant-shapes")
    got = run_json(DESCRIBE_VARIANTS, child_env(hub, tmp_path / "cache"), "acme/variant-shapes",
                   json.dumps({"version": 1, **CPU}))
    assert len(got["ours"]) == len(SHAPES), got["ours"]  # every name but not-a-variant, and the CPU build
    # The same objects; kernels orders variants it ranks alike by a set's order, so as sets.
    as_set = lambda decisions: sorted(json.dumps(d, sort_keys=True) for d in decisions)  # noqa: E731
    assert as_set(got["ours"]) == as_set(got["theirs"])
    first = got["ours"][0]["VariantAccepted"]["variant"]["ArchVariant"]
    assert first["framework"]["Torch"]["version"] == "2.15"
    assert first["backend"] == {"CPU": {"variant_str": "cpu", "name": "cpu"}}
    assert got["first_framework"] == "Torch"  # code that reads `decision.variant.framework` runs
