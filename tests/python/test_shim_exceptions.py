"""Every exception the shim raises is an instance of the class the `kernels` package raises for the
same case: the table below, each case run by kernels 0.19.1, by kernels 0.17.2 (from its own folder,
kernels_releases.py) and by kernelhub against one `kernelhub serve`, each package in its own child
interpreter. A case says what 0.19.1 raises; kernelhub's exception must be an instance of that class
and of 0.17.2's (where 0.17.2 raises at all: it has no digest, minimum-version or same-build check),
and a KernelhubError, so `except` clauses written for either release keep working."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from huggingface_hub import HfApi
from kernels_releases import CURRENT, OLDER, kernels_env
from shim_support import child_env, cpu_variant_dir, publish, require_shim, run_json

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

REPO = "acme/reference-kernels"
NO_FIT_VARIANT = "torch215-cxx11-cpu-aarch64-linux"
# Raised by kernels' own kernelize code, which kernelhub's layers reuse: the same class, not ours.
KERNELS_OWN = {"layer missing from the kernel"}
CPU = {"backend": "cpu"}

# Runs the cases (argv[2], JSON) with one package (argv[1]); prints, per case, what it raised and,
# given what the releases raised (argv[4]), whether that is an instance of each of their classes.
# A case is a list of calls made in order, each [function, args, kwargs] (function "layer": load
# a LayerRepository), with `env` set around them and its own cache.
RUN_CASES = r"""
import importlib, json, os, sys
from pathlib import Path
package, cases, root = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
theirs = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
pkg = __import__(package)
def call(function, args, kwargs):
    if function == "layer":
        return pkg.LayerRepository(*args, **kwargs).load()
    if function == "get_local_kernel":
        args = [Path(args[0]), *args[1:]]
    return getattr(pkg, function)(*args, **kwargs)
def cls(spec):
    found = importlib.import_module(spec["module"])
    for part in spec["qualname"].split("."):
        found = getattr(found, part)
    return found
out = {}
for name, case in cases.items():
    saved = dict(os.environ)
    os.environ.update(case.get("env", {}), KERNELS_CACHE=os.path.join(root, package, name))
    raised = None
    try:
        for function, args, kwargs in case["calls"]:
            call(function, args, kwargs)
    except Exception as e:
        raised = e
    finally:
        os.environ.clear(); os.environ.update(saved)
    out[name] = None if raised is None else {
        "module": type(raised).__module__, "qualname": type(raised).__qualname__, "str": str(raised),
        "mro": [c.__name__ for c in type(raised).__mro__],
        "is": {release: isinstance(raised, cls(spec)) for release, spec in theirs.get(name, {}).items()}}
print(json.dumps(out))
"""


def tampered(source: Path, target: Path) -> Path:
    """A copy of a variant directory whose __init__.py no longer matches metadata.json's digest."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    with open(target / "__init__.py", "a") as f:
        f.write("\n# changed after the build\n")
    return target


def with_metadata(source: Path, target: Path, **changes) -> Path:
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    metadata = json.loads((target / "metadata.json").read_text())
    metadata.update(changes)
    (target / "metadata.json").write_text(json.dumps(metadata))
    return target


def rebuilt(source: Path, target: Path) -> Path:
    """The same kernel id, another build: a changed __init__.py whose new hash the digest records."""
    import base64
    import hashlib

    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    init = target / "__init__.py"
    init.write_text(init.read_text() + "\nREBUILT = True\n")
    metadata = json.loads((target / "metadata.json").read_text())
    metadata["digest"]["files"]["__init__.py"] = base64.b64encode(hashlib.sha256(init.read_bytes()).digest()).decode()
    (target / "metadata.json").write_text(json.dumps(metadata))
    return target


@pytest.fixture(scope="module")
def world(hub_server, tmp_path_factory):
    """The server's repos and the local directories the cases use."""
    require_shim()
    root = tmp_path_factory.mktemp("cases")
    variant = cpu_variant_dir()
    hub_server.commit = publish(hub_server, REPO)
    # kernels picks CUDA for a CUDA torch whatever the machine has; where a call takes no backend
    # (a layer, a locked load), a CUDA-named copy is what it loads.
    cuda_name = variant.name.replace("-cpu-", "-cu130-")
    publish(hub_server, REPO, variant_name=cuda_name)
    publish(hub_server, "alice/reference-kernels")
    publish(hub_server, "acme/aarch64-only", variant_name=NO_FIT_VARIANT)
    bad = tampered(variant, root / "tampered" / "build" / variant.name)
    publish(hub_server, "acme/tampered", variant=bad)
    hub_server.tampered_commit = publish(hub_server, "acme/tampered", variant=bad, variant_name=cuda_name)
    api = HfApi(endpoint=hub_server.url, token=hub_server.write_token)
    api.create_repo("acme/no-versions", repo_type="kernel", exist_ok=True)
    api.upload_folder(folder_path=str(variant), path_in_repo=f"build/{variant.name}", repo_id="acme/no-versions",
                      repo_type="kernel", ignore_patterns=["__pycache__/*", "*.pyc"])
    with_metadata(variant, root / "too-new" / "build" / variant.name, **{"kernels-minver": "99.0.0"})
    (root / "corrupt" / "build" / variant.name).mkdir(parents=True)
    (root / "corrupt" / "build" / variant.name / "metadata.json").write_text("{not json")
    rebuilt(variant, root / "rebuilt" / "build" / variant.name)
    lock = root / "kernels.lock"
    lock.write_text(json.dumps([{"dependency": {"repo-id": "acme/tampered", "version": 1},
                                 "lock": {"commit": hub_server.tampered_commit}}]))
    hub_server.cases_root = root
    return hub_server


def call(function: str, *args, **kwargs) -> list:
    return [function, list(args), kwargs]


def get(repo: str, **kwargs) -> list:
    return call("get_kernel", repo, **kwargs)


def cases(world) -> tuple[dict, dict]:
    """(case → its calls and environment, case → the class kernels 0.19.1 raises), online."""
    root, local, lock = world.cases_root, str(cpu_variant_dir().parent.parent), str(world.cases_root / "kernels.lock")
    tampered = str(root / "tampered")
    cpu = {"KERNELHUB_BACKEND": "cpu"}  # for calls that take no backend (kernels picks its CUDA copy)
    table = {  # name: (what kernels 0.19.1 raises, calls[, environment])
        "repo missing, trusted publisher": ("RepositoryNotFoundError", [get("acme/no-such-kernel", version=1, **CPU)]),
        "repo missing, unknown publisher": ("ValueError", [get("nobody/no-such-kernel", version=1, **CPU)]),
        "repo missing, trust_remote_code": (
            "RepositoryNotFoundError", [get("nobody/no-such-kernel", version=1, trust_remote_code=True, **CPU)]),
        "repo missing, by revision": ("RepositoryNotFoundError", [get("acme/no-such-kernel", revision="main", **CPU)]),
        "repo missing, has_kernel": (
            "RepositoryNotFoundError", [call("has_kernel", "acme/no-such-kernel", version=1, **CPU)]),
        "repo missing, install_kernel": (
            "RepositoryNotFoundError", [call("install_kernel", "acme/no-such-kernel", version=1, **CPU)]),
        "repo missing, get_kernel_variants": (
            "RepositoryNotFoundError", [call("get_kernel_variants", "acme/no-such-kernel", version=1, **CPU)]),
        "revision missing": ("RevisionNotFoundError", [get(REPO, revision="no-such-branch", **CPU)]),
        "version missing": ("ValueError", [get(REPO, version=7, **CPU)]),
        "neither version nor revision": ("ValueError", [get(REPO, **CPU)]),
        "both version and revision": ("ValueError", [get(REPO, version=1, revision="v1", **CPU)]),
        "malformed repo id": ("ValueError", [get("not a repo id", version=1, **CPU)]),
        "no variant runs here": ("FileNotFoundError", [get("acme/aarch64-only", version=1, **CPU)]),
        "untrusted publisher": ("ValueError", [get("alice/reference-kernels", version=1, **CPU)]),
        "untrusted publisher, has_kernel": (
            "ValueError", [call("has_kernel", "alice/reference-kernels", version=1, **CPU)]),
        "token refused": ("HfHubHTTPError", [get(REPO, version=1, **CPU)], {"HF_TOKEN": "hf_no_such_token"}),
        "digest mismatch, Hub": ("RuntimeError", [get("acme/tampered", version=1, **CPU)]),
        "digest mismatch, local directory": ("RuntimeError", [call("get_local_kernel", tampered, **CPU)]),
        "digest mismatch, LOCAL_KERNELS": (
            "RuntimeError", [get("acme/elsewhere", version=1, **CPU)], {"LOCAL_KERNELS": f"acme/elsewhere={tampered}"}),
        "digest mismatch, locked": ("RuntimeError", [call("get_locked_kernel", "acme/tampered", lockfile=lock)], cpu),
        "kernels-minver too new": ("RuntimeError", [call("get_local_kernel", str(root / "too-new"), **CPU)]),
        "metadata.json corrupt": ("ValueError", [call("get_local_kernel", str(root / "corrupt"), **CPU)]),
        "local directory missing": ("FileNotFoundError", [call("get_local_kernel", str(root / "none"), **CPU)]),
        "LOCAL_KERNELS malformed": ("ValueError", [get(REPO, version=1, **CPU)], {"LOCAL_KERNELS": "no-equals-sign"}),
        "lock file missing": ("FileNotFoundError", [call("get_locked_kernel", REPO, lockfile=str(root / "none.lock"))]),
        "repo not locked": ("ValueError", [call("load_kernel", REPO, lockfile=lock, **CPU)]),
        "locked, not in the cache": ("FileNotFoundError", [call("load_kernel", "acme/tampered", lockfile=lock, **CPU)]),
        "layer missing from the kernel": (
            "ValueError", [call("layer", REPO, layer_name="NoSuchLayer", version=1)], cpu),
        "all latest, no numbered version": (
            "ValueError", [get("acme/no-versions", revision="main", **CPU)], {"UNSTABLE_KERNELS_ALL_LATEST": "1"}),
        "same id, another build": ("RuntimeError", [call("get_local_kernel", local, **CPU),
                                                    call("get_local_kernel", str(root / "rebuilt"), **CPU)]),
    }
    return ({name: {"calls": row[1], "env": row[2] if len(row) > 2 else {}} for name, row in table.items()},
            {name: row[0] for name, row in table.items()})


def offline_cases(world) -> tuple[dict, dict]:
    table = {
        "offline, version not cached": ("ValueError", [get(REPO, version=1, **CPU)]),
        "offline, branch not cached": ("ValueError", [get(REPO, revision="main", **CPU)]),
        "offline, commit not cached": ("FileNotFoundError", [get(REPO, revision=world.commit, **CPU)]),
        "offline, all latest, nothing cached": (
            "ValueError", [get(REPO, version=1, **CPU)], {"UNSTABLE_KERNELS_ALL_LATEST": "yes"}),
    }
    return ({name: {"calls": row[1], "env": row[2] if len(row) > 2 else {}} for name, row in table.items()},
            {name: row[0] for name, row in table.items()})


def run_table(world, tmp_path, table: dict, offline: bool) -> dict:
    """What each release and kernelhub raised, and whether ours is an instance of theirs."""
    env = child_env(world, tmp_path / "unused-cache", offline=offline)
    args = (json.dumps(table), str(tmp_path / "caches"))
    raised = {release: run_json(RUN_CASES, kernels_env(env, release), "kernels", *args, timeout=900)
              for release in (CURRENT, OLDER)}
    theirs = {name: {release: raised[release][name] for release in raised if raised[release][name]} for name in table}
    ours = run_json(RUN_CASES, env, "kernelhub", *args, json.dumps(theirs), timeout=900)
    return {"ours": ours, "theirs": theirs}


def check(result: dict, expected: dict) -> None:
    ours, theirs = result["ours"], result["theirs"]
    for name in expected:  # the table, for `pytest -s`
        raised = {release: (theirs[name].get(release) or {}).get("qualname", "-") for release in (CURRENT, OLDER)}
        print(f"{name:36} {raised[CURRENT]:24} {raised[OLDER]:24} {(ours[name] or {}).get('qualname', '-')}")
    problems = []
    for name, wanted in expected.items():
        current = theirs[name].get(CURRENT)
        if current is None or wanted not in current["mro"]:
            problems.append(f"{name}: kernels {CURRENT} raised {current and current['qualname']}, not {wanted}")
        if ours[name] is None:
            problems.append(f"{name}: kernelhub raised nothing")
            continue
        if "KernelhubError" not in ours[name]["mro"] and name not in KERNELS_OWN:
            problems.append(f"{name}: kernelhub's {ours[name]['qualname']} is no KernelhubError: {ours[name]['str']}")
        for release, ok in ours[name]["is"].items():
            if not ok:
                problems.append(f"{name}: kernelhub's {ours[name]['qualname']} {ours[name]['mro']} is not a "
                                f"{theirs[name][release]['qualname']} (kernels {release}): {ours[name]['str']}")
    assert not problems, "\n".join(problems)


def test_online_cases(world, tmp_path):
    table, expected = cases(world)
    result = run_table(world, tmp_path, table, offline=False)
    check(result, expected)
    ours = result["ours"]
    # kernels 0.19.1's words where code matches on them.
    for name in ("digest mismatch, Hub", "digest mismatch, local directory", "digest mismatch, LOCAL_KERNELS",
                 "digest mismatch, locked"):
        assert "the files do not match the digest in the metadata" in ours[name]["str"], ours[name]
        assert "File hash mismatch for __init__.py" in ours[name]["str"], ours[name]
    assert "requires kernels>=99.0.0" in ours["kernels-minver too new"]["str"]
    assert "has the same id" in ours["same id, another build"]["str"]
    differences = "Differences with the loaded build:\nFile hash mismatch for __init__.py"
    assert differences in ours["same id, another build"]["str"]
    assert "UNSTABLE_KERNELS_ALL_LATEST requires a numbered version" in ours["all latest, no numbered version"]["str"]
    # 0.17.2 checked neither, so loaded what 0.19.1 refuses; kernelhub refuses it too.
    for name in ("digest mismatch, local directory", "same id, another build"):
        assert OLDER not in result["theirs"][name], result["theirs"][name]


def test_offline_cases(world, tmp_path):
    table, expected = offline_cases(world)
    before = len(world.log().splitlines())
    check(run_table(world, tmp_path, table, offline=True), expected)
    assert len(world.log().splitlines()) == before  # offline: no package asked the server anything
