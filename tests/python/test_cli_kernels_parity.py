"""The torch-free CLI's answers to the commands kernels 0.19.1's CLI has: `cache ls`, `variants`
(--all-versions, --version N|latest, --revision, --only-compatible), `describe-api` and `info`
(its --dep-tree: test_kernel_depends.py), each against `kernelhub serve` and, where both print the
same thing, compared with what `kernels` prints for the same repo and cache."""

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
KERNELS_CLI = Path(sys.executable).parent / "kernels"
REPO = "acme/parity-kernels"
FIXTURES = BUILD / "tests" / "fixtures" / "kernel_builder"


@pytest.fixture(scope="module")
def hub(hub_server, tmp_path_factory):
    """acme/parity-kernels: v1 with the CPU variant; v2 with it and an XPU-named copy."""
    if not KERNELHUB.exists():
        pytest.skip(f"{KERNELHUB} is not built")
    require_shim()
    variant = cpu_variant_dir()
    hub_server.v1 = publish(hub_server, REPO, version=1)
    publish(hub_server, REPO, version=2)
    hub_server.v2 = publish(hub_server, REPO, version=2, variant_name=variant.name.replace("-cpu-", "-xpu20253-"))
    no_symbols = sorted((FIXTURES / "kb-activation" / "build").glob("*-cpu-*"))
    if no_symbols:  # kernel-builder's fixture: no symbols.json
        publish(hub_server, "acme/no-symbols", variant=no_symbols[0])
    return hub_server


def env_for(server, cache: Path, **extra: str) -> dict:
    env = child_env(server, cache, KERNELHUB_BACKEND="cpu", **extra)
    env.pop("KERNELHUB_TORCH", None)
    env.pop("KERNELS_CACHE", None)
    env["HF_HUB_CACHE"] = str(cache)
    env["COLUMNS"] = "400"  # kernels truncates table cells to the terminal's width
    return env


def run(command: Path, *args: str, env: dict) -> subprocess.CompletedProcess:
    if command == KERNELS_CLI:
        env = as_cpu_torch(env, Path(env["HF_HUB_CACHE"]).parent)
    return subprocess.run([str(command), *args], capture_output=True, text=True, env=env, timeout=300)


def both_json(*args: str, env: dict) -> tuple[dict, dict]:
    ours = run(KERNELHUB, *args, "--json", env=env)
    theirs = run(KERNELS_CLI, *args, "--json", env=env)
    assert ours.returncode == 0, ours.stdout + ours.stderr
    assert theirs.returncode == 0, theirs.stdout + theirs.stderr
    return json.loads(ours.stdout), json.loads(theirs.stdout)


# --- cache ls ---------------------------------------------------------------------------------------

def test_cache_ls_lists_what_kernels_lists(hub, tmp_path):
    cache = tmp_path / "cache"
    env = env_for(hub, cache)
    for version in ("1", "2"):
        assert run(KERNELHUB, "download", REPO, "--version", version, "--quiet", env=env).returncode == 0
    ours, theirs = both_json("cache", "ls", env=env)
    assert ours["cache_dir"] == theirs["cache_dir"] == str(cache.resolve())
    assert [r["repo_id"] for r in ours["repos"]] == [r["repo_id"] for r in theirs["repos"]] == [REPO]
    (repo,), (their_repo,) = ours["repos"], theirs["repos"]
    for key in ("size_on_disk", "last_modified", "last_accessed"):
        assert repo[key] == pytest.approx(their_repo[key]), key
    assert [v["version"] for v in repo["versions"]] == [v["version"] for v in their_repo["versions"]] == ["v1", "v2"]
    for version, their_version in zip(repo["versions"], their_repo["versions"]):
        assert version["variants"] == their_version["variants"] == [cpu_variant_dir().name]
        assert version["size_on_disk"] == their_version["size_on_disk"] > 0
        assert version["last_modified"] == pytest.approx(their_version["last_modified"])
    assert [v["commit"] for v in repo["versions"]] == [hub.v1, hub.v2]

    text = run(KERNELHUB, "cache", "ls", env=env)
    their_text = run(KERNELS_CLI, "cache", "ls", env=env)
    assert text.returncode == 0 and text.stderr == ""
    assert text.stdout.splitlines()[0].split() == ["ID", "SIZE", "LAST_ACCESSED", "LAST_MODIFIED", "VERSION",
                                                  "VARIANTS"]
    # The same table, row for row (the times are relative: compared as words).
    assert [line.split() for line in text.stdout.splitlines()] == \
        [line.split() for line in their_text.stdout.splitlines()]


def test_cache_ls_of_an_empty_or_broken_cache(hub, tmp_path):
    cache = tmp_path / "cache"
    env = env_for(hub, cache)
    empty = run(KERNELHUB, "cache", "ls", env=env)
    assert empty.returncode == 0 and empty.stdout == f"No cached kernel versions found in {cache.resolve()}.\n"
    assert run(KERNELS_CLI, "cache", "ls", env=env).stdout == empty.stdout
    assert json.loads(run(KERNELHUB, "cache", "ls", "--json", env=env).stdout)["repos"] == []

    assert run(KERNELHUB, "download", REPO, "--version", "1", "--quiet", env=env).returncode == 0
    broken = cache / "kernels--acme--broken"
    (broken / "snapshots").mkdir(parents=True)
    (broken / "refs").mkdir()
    (broken / "refs" / "v1").write_text("0" * 40)  # a ref to a commit with no snapshot
    ours = run(KERNELHUB, "cache", "ls", env=env)
    theirs = run(KERNELS_CLI, "cache", "ls", env=env)
    assert ours.returncode == 0 and REPO in ours.stdout and "acme/broken" not in ours.stdout
    warning = "Warning: Found 1 cache inconsistencies. Re-run with `--show-warnings` to display them.\n"
    assert ours.stderr == warning and warning in theirs.stderr
    detailed = run(KERNELHUB, "cache", "ls", "--show-warnings", env=env)
    assert "Reference(s) refer to missing commit hashes" in detailed.stderr and "Repo ignored." in detailed.stderr

    (cache / "not-a-dir").write_text("")
    file_cache = run(KERNELHUB, "cache", "ls", "--cache-dir", str(cache / "not-a-dir"), env=env)
    assert file_cache.returncode == 2 and "not a Hugging Face cache directory" in file_cache.stderr


def test_cache_is_a_command_group(hub, tmp_path):
    env = env_for(hub, tmp_path / "cache")
    listed = run(KERNELHUB, "cache", "--help", env=env)
    assert listed.returncode == 0 and "ls" in listed.stdout
    assert run(KERNELHUB, "cache", env=env).returncode == 2
    assert run(KERNELHUB, "cache", "bogus", env=env).returncode == 2
    help_text = run(KERNELHUB, "cache", "ls", "--help", env=env)
    assert help_text.returncode == 0 and "--show-warnings" in help_text.stdout
    assert "cache" in run(KERNELHUB, "--help", env=env).stdout


# --- variants ---------------------------------------------------------------------------------------

def by_variant(revision: dict) -> dict:
    return {v["variant"]: (v["compatible"], v["preferred"]) for v in revision["variants"]}


def test_variants_lists_the_latest_version_as_kernels_does(hub, tmp_path):
    env = env_for(hub, tmp_path / "cache")
    ours, theirs = both_json("variants", REPO, env=env)
    assert ours["repo_id"] == theirs["repo_id"] == REPO
    (revision,), (their_revision,) = ours["revisions"], theirs["revisions"]
    assert revision["version"] == their_revision["version"] == 2
    assert revision["revision"] == their_revision["revision"] == "refs/heads/v2"  # the ref the Hub lists
    assert revision["commit"] == hub.v2
    assert by_variant(revision) == by_variant(their_revision)
    assert revision["chosen"] == cpu_variant_dir().name
    assert by_variant(revision)[cpu_variant_dir().name] == (True, True)


@pytest.mark.parametrize("args", [("--all-versions",), ("--version", "1"), ("--version", "latest"),
                                  ("--all-versions", "--only-compatible")])
def test_variants_options_answer_as_kernels_answers(hub, tmp_path, args):
    env = env_for(hub, tmp_path / "cache")
    ours, theirs = both_json("variants", REPO, *args, env=env)
    assert [r["version"] for r in ours["revisions"]] == [r["version"] for r in theirs["revisions"]]
    for revision, their_revision in zip(ours["revisions"], theirs["revisions"]):
        assert by_variant(revision) == by_variant(their_revision)
        if "--only-compatible" in args:
            assert all(v["compatible"] for v in revision["variants"])


def test_variants_by_revision_missing_versions_and_bad_usage(hub, tmp_path):
    env = env_for(hub, tmp_path / "cache")
    ours = json.loads(run(KERNELHUB, "variants", REPO, "--revision", hub.v1, "--json", env=env).stdout)
    assert ours["revisions"][0]["version"] is None and ours["revisions"][0]["commit"] == hub.v1
    text = run(KERNELHUB, "variants", REPO, "--all-versions", env=env)
    assert text.returncode == 0
    assert f"Version 1 (commit {hub.v1}):" in text.stdout and f"Version 2 (commit {hub.v2}):" in text.stdout
    assert "compatible, preferred" in text.stdout
    only = run(KERNELHUB, "variants", REPO, "--only-compatible", env=env)
    assert "xpu20253" not in only.stdout and cpu_variant_dir().name in only.stdout

    missing = run(KERNELHUB, "variants", REPO, "--version", "7", env=env)
    theirs = run(KERNELS_CLI, "variants", REPO, "--version", "7", env=env)
    assert missing.returncode == 3 and theirs.returncode == 1  # ours: its kind (docs/CLI.md)
    assert "Version 7 not found, available versions: 1, 2" in missing.stderr
    assert "Version 7 not found, available versions: 1, 2" in theirs.stderr
    for bad in (["--all-versions", "--version", "1"], ["--version", "1", "--revision", "main"],
                ["--version", "one"], ["--revision", "main", "--all-versions"]):
        assert run(KERNELHUB, "variants", REPO, *bad, env=env).returncode == 2, bad
    local = run(KERNELHUB, "variants", str(BUILD / "kernels"), "--version", "1", env=env)
    assert local.returncode == 2 and "not a directory" in local.stderr


# --- describe-api -----------------------------------------------------------------------------------

def test_describe_api_reads_symbols_json_as_kernels_does(hub, tmp_path):
    env = env_for(hub, tmp_path / "cache")
    ours, theirs = both_json("describe-api", REPO, "--version", "1", env=env)
    for key in ("schema_version", "module", "functions", "layers", "repo_id", "revision", "variant"):
        assert ours[key] == theirs[key], key
    names = [f["name"] for f in ours["functions"]]
    assert "rms_norm" in names and "RMSNorm" in [layer["name"] for layer in ours["layers"]]
    # For C++ callers: each op and the typed handle to call it through.
    rms_norm = next(op for op in ours["ops"] if op["name"] == "rms_norm")
    assert rms_norm["cpp_signature"] == "void(at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, double)"
    assert ours["namespace"] == ours["module"]
    text = run(KERNELHUB, "describe-api", REPO, "--version", "1", env=env).stdout
    their_text = run(KERNELS_CLI, "describe-api", REPO, "--version", "1", env=env).stdout
    assert text.startswith(their_text)  # kernels' lines, then the ops
    assert 'kernel.op<void(at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, double)>("rms_norm")' \
        in text
    # Only the listing, metadata.json and the two API files were downloaded: nothing to load.
    snapshot = tmp_path / "cache" / "kernels--acme--parity-kernels" / "snapshots" / hub.v1
    assert sorted(p.name for p in snapshot.rglob("*") if p.is_file()) == \
        ["metadata.json", "op_schemas.json", "symbols.json"]


def test_describe_api_of_a_directory_the_latest_version_and_a_kernel_without_symbols(hub, tmp_path):
    env = env_for(hub, tmp_path / "cache")
    local, their_local = both_json("describe-api", str(BUILD / "kernels"), env=env)
    assert local["path"] == their_local["path"] and local["functions"] == their_local["functions"]
    assert local["variant"] == their_local["variant"] == cpu_variant_dir().name
    latest = json.loads(run(KERNELHUB, "describe-api", REPO, "--json", env=env).stdout)
    assert latest["revision"] == "v2"
    if not sorted((FIXTURES / "kb-activation" / "build").glob("*-cpu-*")):
        pytest.skip("the kernel-builder fixtures are not built")
    missing = run(KERNELHUB, "describe-api", "acme/no-symbols", "--version", "1", env=env)
    theirs = run(KERNELS_CLI, "describe-api", "acme/no-symbols", "--version", "1", env=env)
    assert missing.returncode == 3 and theirs.returncode == 1  # ours: its kind (docs/CLI.md)
    assert "No symbols.json found in acme/no-symbols (version: 1, revision: v1)" in missing.stderr
    assert "No symbols.json found in acme/no-symbols (version: 1, revision: v1)" in theirs.stderr
    assert run(KERNELHUB, "describe-api", REPO, "--version", "1", "--revision", "main", env=env).returncode == 2


def test_describe_api_refuses_a_symbols_json_of_another_schema(hub, tmp_path):
    kernel = tmp_path / "kernel"
    shutil.copytree(cpu_variant_dir(), kernel / "build" / cpu_variant_dir().name,
                    ignore=shutil.ignore_patterns("__pycache__"))
    symbols = kernel / "build" / cpu_variant_dir().name / "symbols.json"
    env = env_for(hub, tmp_path / "cache")
    for content in ('{"schema_version": 2, "functions": [], "layers": []}', '{"schema_version": 1}', "[",
                    '{"schema_version": 1, "functions": [{"name": 3}], "layers": []}'):
        symbols.write_text(content)
        result = run(KERNELHUB, "describe-api", str(kernel), env=env)
        assert result.returncode == 9 and "symbols.json" in result.stderr, content


def test_every_new_command_has_help_and_json(hub, tmp_path):
    env = env_for(hub, tmp_path / "cache")
    for command in (["cache", "ls"], ["variants"], ["describe-api"], ["info"], ["verify"], ["keygen"], ["serve"],
                    ["download"], ["lock"], ["get"]):
        result = run(KERNELHUB, *command, "--help", env=env)
        assert result.returncode == 0 and "--json" in result.stdout, command
    assert run(KERNELHUB, "info", env=env).returncode == 2
    assert run(KERNELHUB, "describe-api", env=env).returncode == 2
