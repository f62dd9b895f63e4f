"""metadata.json `kernel-depends`: the kernels a kernel depends on are fetched, verified and loaded
before it, recursively (fetch/internal/kernelhub/fetch/internal/kernel_tree.hpp), through every path we offer and
as kernels 0.19.1 does it, against `kernelhub serve`.

The chain is three real native kernels with distinct op namespaces, each republished with a
`kernel-depends` entry (the digest leaves metadata.json out, so the files still verify):
acme/chain-a (the reference kernels, whose __init__.py also asks `kernels.get_kernel_dep` for its
dependency while it is imported) -> acme/chain-b (kb-activation) -> acme/chain-c
(kb-activation-stable). Beside it, a cycle (acme/cycle-a -> acme/cycle-b -> acme/cycle-a) and a
dependency on a repo that does not exist (acme/lonely -> acme/nowhere) and one with no variant for
this machine (acme/picky -> acme/xpu-only)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cpu_torch import as_cpu_torch
from shim_support import BUILD, child_env, cpu_variant_dir, publish, require_shim

KERNELHUB = BUILD / "bin" / "kernelhub"
FIXTURES = BUILD / "tests" / "fixtures" / "kernel_builder"
KERNELS_CLI = Path(sys.executable).parent / "kernels"
CHAIN = ["acme/chain-a", "acme/chain-b", "acme/chain-c"]


def fixture_variant(kernel: str) -> Path:
    dirs = sorted((FIXTURES / kernel / "build").glob("*-cpu-*"))
    if not dirs:
        pytest.skip(f"the kernel-builder fixtures are not built under {FIXTURES} (target kernel_builder_fixtures)")
    return dirs[0]


def metadata_of(variant: Path) -> dict:
    return json.loads((variant / "metadata.json").read_text())


def with_depends(variant: Path, into: Path, depends: list[dict], init_suffix: str = "") -> Path:
    """A copy of `variant` whose metadata.json names `depends` (and whose __init__.py ends with
    `init_suffix`, the digest recomputed as kernel-builder computes it)."""
    copy = into / variant.name
    shutil.copytree(variant, copy, ignore=shutil.ignore_patterns("__pycache__"))
    metadata = metadata_of(copy)
    metadata["kernel-depends"] = depends
    if init_suffix:
        import kernels_data

        init = copy / "__init__.py"
        init.write_text(init.read_text() + init_suffix)
        digest = kernels_data.Digest.hash_variant(kernels_data.DigestAlgorithm.SHA256, str(copy))
        metadata["digest"] = {"algorithm": "sha256", "files": dict(sorted(digest.files.items()))}
    (copy / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n")
    return copy


def depends_on(*repos: str) -> list[dict]:
    return [{"repo-id": repo, "version": 1} for repo in repos]


@pytest.fixture(scope="module")
def hub(hub_server, tmp_path_factory):
    if not KERNELHUB.exists():
        pytest.skip(f"{KERNELHUB} is not built")
    require_shim()
    staged = tmp_path_factory.mktemp("staged")
    reference, activation, stable = cpu_variant_dir(), fixture_variant("kb-activation"), \
        fixture_variant("kb-activation-stable")

    def stage(name: str, variant: Path, depends: list[dict], init_suffix: str = "") -> Path:
        folder = staged / name
        folder.mkdir()
        return with_depends(variant, folder, depends, init_suffix)

    asks = 'import kernels as _kernels\nCHAIN_DEPENDENCY = _kernels.get_kernel_dep("acme/chain-b")\n'
    publish(hub_server, "acme/chain-c", variant=stage("c", stable, []))
    publish(hub_server, "acme/chain-b", variant=stage("b", activation, depends_on("acme/chain-c")))
    hub_server.chain_commit = publish(hub_server, "acme/chain-a",
                                      variant=stage("a", reference, depends_on("acme/chain-b"), asks))
    publish(hub_server, "acme/cycle-a", variant=stage("cycle-a", reference, depends_on("acme/cycle-b")))
    publish(hub_server, "acme/cycle-b", variant=stage("cycle-b", activation, depends_on("acme/cycle-a")))
    publish(hub_server, "acme/lonely", variant=stage("lonely", reference, depends_on("acme/nowhere")))
    # A dependency with no variant for this machine (an XPU build only).
    publish(hub_server, "acme/picky", variant=stage("picky", reference, depends_on("acme/xpu-only")))
    xpu = reference.name.replace("-cpu-", "-xpu20253-")
    publish(hub_server, "acme/xpu-only", variant_name=xpu, variant=stage("xpu-only", activation, []))
    hub_server.ids = {repo: metadata_of(v)["id"] for repo, v in zip(CHAIN, (reference, activation, stable))}
    return hub_server


def env_for(server, cache: Path, **extra: str) -> dict:
    env = child_env(server, cache, KERNELHUB_BACKEND="cpu", **extra)
    env.pop("KERNELHUB_TORCH", None)
    return env


def kernelhub(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([str(KERNELHUB), *args], capture_output=True, text=True, env=env, timeout=300)


def python(script: str, env: dict) -> subprocess.CompletedProcess:
    """`script` in a child interpreter; one importing kernels sees a CPU torch (cpu_torch.py)."""
    if "from kernels " in script:
        env = as_cpu_torch(env, Path(env["HF_HUB_CACHE"]).parent)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)


def kernels_cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    env = as_cpu_torch(env, Path(env["HF_HUB_CACHE"]).parent)
    return subprocess.run([str(KERNELS_CLI), *args], capture_output=True, text=True, env=env, timeout=300)


LOAD = """
import json, sys
from {package} import get_kernel, get_loaded_kernels
module = get_kernel("acme/chain-a", version=1)
print(json.dumps({{"module": module.__name__, "dependency": module.CHAIN_DEPENDENCY.__name__,
                  "loaded": [k.metadata.id for k in get_loaded_kernels()],
                  "imported": [name for name in {ids} if name in sys.modules]}}))
"""


def test_cpp_get_loads_every_dependency_first(hub, tmp_path):
    result = kernelhub("get", "acme/chain-a", "--version", "1", "--json", env=env_for(hub, tmp_path / "cache"))
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    assert got["namespace"] == hub.ids["acme/chain-a"] and got["revision"] == hub.chain_commit
    (b,) = got["dependencies"]
    assert b["namespace"] == hub.ids["acme/chain-b"] and b["name"] == "kb-activation"
    (c,) = b["dependencies"]
    assert c["namespace"] == hub.ids["acme/chain-c"] and c["dependencies"] == []
    assert c["variant"].startswith("torch-stable-abi")
    for repo in CHAIN:  # each in the cache, at its own v1
        folder = tmp_path / "cache" / ("kernels--" + repo.replace("/", "--"))
        assert (folder / "refs" / "v1").is_file(), repo
    text = kernelhub("get", "acme/chain-a", "--version", "1", env=env_for(hub, tmp_path / "cache"))
    assert text.returncode == 0 and "depends on (loaded first):" in text.stdout
    assert "  kb-activation (" in text.stdout and "    kb-activation-stable (" in text.stdout


def test_cli_download_fetches_the_dependencies_too(hub, tmp_path):
    result = kernelhub("download", "acme/chain-a", "--version", "1", "--json", env=env_for(hub, tmp_path / "cache"))
    assert result.returncode == 0, result.stdout + result.stderr
    got = json.loads(result.stdout)
    assert [(d["repo"], d["needed_by"]) for d in got["dependencies"]] == \
        [("acme/chain-c", "acme/chain-b"), ("acme/chain-b", "acme/chain-a")]
    for dependency in got["dependencies"]:
        (path,) = dependency["paths"]
        assert (Path(path) / "metadata.json").is_file()
    # Everything a load needs is now cached: the chain loads offline.
    offline = env_for(hub, tmp_path / "cache", HF_HUB_OFFLINE="1")
    loaded = kernelhub("get", "acme/chain-a", "--revision", hub.chain_commit, "--json", env=offline)
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(loaded.stdout)["dependencies"][0]["namespace"] == hub.ids["acme/chain-b"]


@pytest.mark.parametrize("package", ["kernelhub", "kernels"])
def test_python_loads_the_chain_and_the_kernel_gets_its_dependency(hub, tmp_path, package):
    """The shim and kernels 0.19.1 itself: dependencies imported first, `kernels.get_kernel_dep`
    answered while the kernel's module runs."""
    ids = [hub.ids[repo] for repo in CHAIN]
    result = python(LOAD.format(package=package, ids=ids), env_for(hub, tmp_path / "cache"))
    assert result.returncode == 0, result.stderr[-4000:]
    got = json.loads(result.stdout.strip().splitlines()[-1])
    assert got["module"] == hub.ids["acme/chain-a"] and got["dependency"] == hub.ids["acme/chain-b"]
    assert sorted(got["imported"]) == sorted(ids)
    assert set(ids) <= set(got["loaded"])


def test_a_cycle_is_a_typed_error_naming_the_chain(hub, tmp_path):
    env = env_for(hub, tmp_path / "cache")
    result = kernelhub("get", "acme/cycle-a", "--version", "1", env=env)
    assert result.returncode == 9
    assert "kernel dependency cycle: acme/cycle-a -> acme/cycle-b -> acme/cycle-a" in result.stderr
    download = kernelhub("download", "acme/cycle-a", "--version", "1", "--json", env=env)
    assert download.returncode == 9
    error = json.loads(download.stdout)["error"]
    assert error["code"] == "dependency_cycle" and "acme/cycle-a -> acme/cycle-b -> acme/cycle-a" in error["message"]
    script = """
import json
from {package} import get_kernel
try:
    get_kernel("acme/cycle-a", version=1)
except ValueError as e:
    print(json.dumps({{"type": type(e).__name__, "message": str(e)}}))
"""
    ours = json.loads(python(script.format(package="kernelhub"), env).stdout)
    assert ours["type"] == "DependencyCycleError"
    assert "Cyclic kernel dependency detected: acme/cycle-a (acme/cycle-a -> acme/cycle-b -> acme/cycle-a)" \
        == ours["message"]
    theirs = json.loads(python(script.format(package="kernels"), env).stdout)
    assert theirs["message"].startswith("Cyclic kernel dependency detected: acme/cycle-a")


def test_a_missing_dependency_names_the_chain(hub, tmp_path):
    env = env_for(hub, tmp_path / "cache")
    result = kernelhub("get", "acme/lonely", "--version", "1", env=env)
    assert result.returncode == 3
    assert "kernel dependency acme/lonely -> acme/nowhere" in result.stderr and "acme/nowhere" in result.stderr
    script = """
import json
from {package} import get_kernel
from huggingface_hub.errors import RepositoryNotFoundError
try:
    get_kernel("acme/lonely", version=1)
except RepositoryNotFoundError as e:
    print(json.dumps({{"message": str(e)}}))
"""
    ours = python(script.format(package="kernelhub"), env)
    assert "acme/lonely -> acme/nowhere" in json.loads(ours.stdout)["message"], ours.stderr[-3000:]
    theirs = python(script.format(package="kernels"), env)
    assert "acme/nowhere" in json.loads(theirs.stdout)["message"], theirs.stderr[-3000:]


@pytest.mark.parametrize("package", ["kernelhub", "kernels"])
def test_has_kernel_needs_a_variant_of_every_dependency(hub, tmp_path, package):
    script = f"""
import json
from {package} import has_kernel
print(json.dumps([has_kernel("acme/chain-a", version=1), has_kernel("acme/picky", version=1)]))
"""
    result = python(script, env_for(hub, tmp_path / "cache"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == [True, False]


def test_the_lock_covers_the_chain_and_a_locked_load_uses_it(hub, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.kernels.dependencies]\n"acme/chain-a" = 1\n')
    env = env_for(hub, tmp_path / "cache")
    locked = kernelhub("lock", str(project), env=env)
    assert locked.returncode == 0, locked.stderr
    ours = json.loads((project / "kernels.lock").read_text())
    assert [entry["dependency"]["repo-id"] for entry in ours] == CHAIN  # kernels' order: by repo
    assert {entry["repo_id"] for entry in json.loads((project / "kernelhub.lock").read_text())} \
        >= set(CHAIN)
    # What kernels 0.19.1 writes for the same project: the same file.
    theirs_dir = tmp_path / "theirs"
    theirs_dir.mkdir()
    shutil.copy(project / "pyproject.toml", theirs_dir)
    theirs = kernels_cli("lock", str(theirs_dir), env=env)
    assert theirs.returncode == 0, theirs.stderr
    assert json.loads((theirs_dir / "kernels.lock").read_text()) == ours

    # A locked load takes each kernel's commit from the lock, the dependencies' too; then offline.
    cache = tmp_path / "locked-cache"
    fetched = kernelhub("download", "--lockfile", str(project / "kernels.lock"), "--json", env=env_for(hub, cache))
    assert fetched.returncode == 0, fetched.stdout + fetched.stderr
    assert {k["repo"] for k in json.loads(fetched.stdout)["kernels"]} == set(CHAIN)
    offline = env_for(hub, cache, HF_HUB_OFFLINE="1")
    got = kernelhub("get", "acme/chain-a", "--lockfile", str(project / "kernels.lock"), "--json", env=offline)
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["dependencies"][0]["dependencies"][0]["namespace"] == hub.ids["acme/chain-c"]

    # A lock without the dependency says so, in the words of each API.
    partial = tmp_path / "partial.lock"
    partial.write_text(json.dumps([e for e in ours if e["dependency"]["repo-id"] != "acme/chain-b"]))
    refused = kernelhub("get", "acme/chain-a", "--lockfile", str(partial), env=env)
    assert refused.returncode == 3
    assert "kernel dependency acme/chain-a -> acme/chain-b" in refused.stderr and "is not locked" in refused.stderr
    script = f"""
import json
from pathlib import Path
from kernelhub import get_locked_kernel
try:
    get_locked_kernel("acme/chain-a", lockfile=Path({str(partial)!r}))
except ValueError as e:
    print(json.dumps({{"message": str(e)}}))
"""
    message = json.loads(python(script, env).stdout)["message"]
    assert "Kernel `acme/chain-b` is not locked" in message


def test_info_shows_the_dependency_tree_as_kernels_does(hub, tmp_path):
    env = env_for(hub, tmp_path / "cache")
    ours = kernelhub("info", "acme/chain-a", "--dep-tree", "--json", env=env)
    assert ours.returncode == 0, ours.stdout + ours.stderr
    ours = json.loads(ours.stdout)
    theirs = kernels_cli("info", "acme/chain-a", "--dep-tree", "--json", env=env)
    assert theirs.returncode == 0, theirs.stderr
    theirs = json.loads(theirs.stdout)
    assert ours["dependency_tree"] == {"acme/chain-b": {"acme/chain-c": {}}} == theirs["dependency_tree"]
    for key in ("repo_id", "revision", "variant", "name", "version", "license", "kernel_depends", "python_depends",
                "backends", "kernels_minver", "upstream", "source"):
        assert ours[key] == theirs[key], key
    assert ours["commit"] == hub.chain_commit
    text = kernelhub("info", "acme/chain-a", "--dep-tree", env=env)
    assert text.returncode == 0
    assert "Kernel dependencies:\nacme/chain-a\n`-- acme/chain-b\n    `-- acme/chain-c\n" in text.stdout
    flat = kernelhub("info", "acme/chain-a", env=env)
    assert "Kernel dependencies: acme/chain-b, acme/chain-c\n" in flat.stdout
    # Nothing but listings and metadata.json was downloaded.
    snapshot = tmp_path / "cache" / "kernels--acme--chain-b" / "snapshots"
    assert [p.name for p in snapshot.rglob("*") if p.is_file()] == ["metadata.json"]
    cycle = kernelhub("info", "acme/cycle-a", "--json", env=env)
    assert cycle.returncode == 9 and json.loads(cycle.stdout)["error"]["code"] == "dependency_cycle"
