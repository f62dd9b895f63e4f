"""The command-line contract (docs/CLI.md) down to the details a new user meets: `get` shows its
download as `download` does, and says each retry; every command that can fail takes --json; an
error speaks the CLI's words (`--version 1`, never C++); a version the repo lacks is called a
version by every command; `variants` of one variant's folder answers for it; `lock` does not pick
one of two dependency lists silently; `hub-publish --help` lists the statuses it returns."""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from shim_support import BUILD, child_env, cpu_variant_dir, publish, require_shim

KERNELHUB = BUILD / "bin" / "kernelhub"
HUB_PUBLISH = BUILD / "bin" / "hub-publish"
REPO = "acme/contract-kernels"


@pytest.fixture(scope="module")
def hub(hub_server):
    require_shim()
    hub_server.commit = publish(hub_server, REPO)
    return hub_server


def kernelhub(server, cache: Path, *args: str, **extra: str) -> subprocess.CompletedProcess:
    env = child_env(server, cache, KERNELHUB_BACKEND="cpu", **extra)
    return subprocess.run([str(KERNELHUB), *args], capture_output=True, text=True, env=env, timeout=300)


def on_a_terminal(command: list[str], env: dict, timeout: float = 120) -> tuple[int, str]:
    """Runs `command` with stdout and stderr on a pseudo-terminal; its exit status and output."""
    main, side = pty.openpty()
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=side, stderr=side, env=env)
    os.close(side)
    output = bytearray()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the terminal closed: the process is done
                break
            if not chunk:
                break
            output += chunk
        elif process.poll() is not None:
            break
    os.close(main)
    return process.wait(timeout=10), output.decode(errors="replace")


# --- get: progress and retries ---------------------------------------------------------------------

def test_get_draws_the_download_on_a_terminal_and_says_the_retry(kernelhub_serve, tmp_path):
    require_shim()
    library = max((f for f in cpu_variant_dir().rglob("*.so")), key=lambda f: f.stat().st_size)
    # The storage host cuts the first download of each LFS object part-way: one retry, said.
    server = kernelhub_serve("--fault-cut-after", str(library.stat().st_size // 2))
    publish(server, REPO)
    env = child_env(server, tmp_path / "cache", KERNELHUB_BACKEND="cpu")
    status, output = on_a_terminal([str(KERNELHUB), "get", REPO, "--version", "1"], env)
    assert status == 0, output
    assert "[0/" in output and " files]" in output and "ETA" in output  # the progress line, as download's
    assert f"retrying `build/{cpu_variant_dir().name}/{library.relative_to(cpu_variant_dir()).as_posix()}` in " \
        in output and "(retry 1 of 5)" in output, output
    assert "namespace:" in output  # and the kernel loaded
    # Warm: nothing to download, no line; with --json, never one.
    status, output = on_a_terminal([str(KERNELHUB), "get", REPO, "--version", "1"], env)
    assert status == 0 and "ETA" not in output, output


# --- --json, statuses and words ---------------------------------------------------------------------

def test_verify_keygen_and_serve_take_json(tmp_path):
    require_shim()
    key = tmp_path / "k.key"
    made = subprocess.run([str(KERNELHUB), "keygen", "--out", str(key), "--json"], capture_output=True, text=True,
                          timeout=60)
    assert made.returncode == 0, made.stderr
    made = json.loads(made.stdout)
    assert made["private_key"] == str(key) and made["public_key"] == f"{key}.pub"
    assert made["public_key_base64"] == (tmp_path / "k.key.pub").read_text().strip() and len(made["key_id"]) == 16
    again = subprocess.run([str(KERNELHUB), "keygen", "--out", str(key), "--json"], capture_output=True, text=True,
                           timeout=60)
    assert again.returncode == 1 and json.loads(again.stdout)["error"]["code"] == "io"

    variant = cpu_variant_dir()
    checked = subprocess.run([str(KERNELHUB), "verify", str(variant), "--repo", REPO, "--json"], capture_output=True,
                             text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr
    checked = json.loads(checked.stdout)
    assert checked["variant"] == variant.name and checked["digest"]["checked"] is True
    assert checked["digest"]["files"] > 0 and checked["signature"] == {"status": "unsigned"}
    refused = subprocess.run([str(KERNELHUB), "verify", str(variant), "--repo", REPO, "--require", "--json"],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 8 and json.loads(refused.stdout)["error"]["code"] == "missing_signature"

    serve = subprocess.Popen([str(KERNELHUB), "serve", "--root", str(tmp_path / "store"), "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        listening = json.loads(serve.stdout.readline())
        assert listening["url"].startswith("http://") and listening["root"] == str(tmp_path / "store")
    finally:
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=60) == 0
    bad = subprocess.run([str(KERNELHUB), "serve", "--root", str(tmp_path / "store"), "--tokens",
                          str(tmp_path / "none.json"), "--json"], capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "error" in json.loads(bad.stdout)


def test_a_missing_version_is_a_version_for_download_as_for_get(hub, tmp_path):
    got = kernelhub(hub, tmp_path / "cache", "get", REPO, "--version", "7", "--json")
    downloaded = kernelhub(hub, tmp_path / "cache", "download", REPO, "--version", "7", "--json")
    assert got.returncode == downloaded.returncode == 3
    got, downloaded = json.loads(got.stdout)["error"], json.loads(downloaded.stdout)["error"]
    assert got["missing"] == downloaded["missing"] == "version"
    assert got["message"] == downloaded["message"] == f"Version 7 of `{REPO}` not found, available versions: v1"


def test_errors_speak_the_command_lines_words(hub, tmp_path):
    no_version = kernelhub(hub, tmp_path / "cache", "get", REPO)
    assert no_version.returncode == 2
    assert "Give --version 1 (or --revision R)" in no_version.stderr and "{." not in no_version.stderr
    offline = kernelhub(hub, tmp_path / "empty", "get", REPO, "--version", "1", HF_HUB_OFFLINE="1")
    assert offline.returncode == 6
    assert "--revision <commit>" in offline.stderr and "{." not in offline.stderr


def test_variants_of_one_variants_folder_answers_for_it(hub, tmp_path):
    variant = cpu_variant_dir()
    own = kernelhub(hub, tmp_path / "cache", "variants", str(variant))
    assert own.returncode == 0, own.stderr
    assert f"chosen: {variant.name}" in own.stdout and "is a variant's folder" in own.stderr
    decisions = json.loads(kernelhub(hub, tmp_path / "cache", "variants", str(variant), "--json").stdout)
    assert [d["variant"] for d in decisions["decisions"]] == [variant.name]
    renamed = tmp_path / "my-build"
    shutil.copytree(variant, renamed, ignore=shutil.ignore_patterns("__pycache__"))
    unnamed = kernelhub(hub, tmp_path / "cache", "variants", str(renamed))
    assert unnamed.returncode == 2 and "is no variant name" in unnamed.stderr


def test_lock_names_the_list_it_locked_and_refuses_two(hub, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(f'[tool.kernels.dependencies]\n"{REPO}" = 1\n')
    locked = kernelhub(hub, tmp_path / "cache", "lock", str(project))
    assert locked.returncode == 0, locked.stderr
    assert f"locked the kernels listed in {project / 'pyproject.toml'}" in locked.stdout
    (project / "kernels.toml").write_text(f'[dependencies]\n"{REPO}" = 1\n')
    both = kernelhub(hub, tmp_path / "cache", "lock", str(project), "--json")
    assert both.returncode == 2
    message = json.loads(both.stdout)["error"]["message"]
    assert "pyproject.toml" in message and "kernels.toml" in message and "keep one list" in message


def test_hub_publish_help_lists_the_statuses_it_returns(hub, tmp_path):
    if not HUB_PUBLISH.exists():
        pytest.skip(f"{HUB_PUBLISH} is not built")
    listed = subprocess.run([str(HUB_PUBLISH), "--help"], capture_output=True, text=True, timeout=60).stdout
    for status in ("0", "1", "2", "3", "5", "7", "9"):
        assert f"\n  {status}  " in listed, status
    build = tmp_path / "build"
    shutil.copytree(cpu_variant_dir(), build / cpu_variant_dir().name, ignore=shutil.ignore_patterns("__pycache__"))

    def publish_with(token: str, *args: str) -> int:
        env = dict(os.environ, HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "hf-home"), HF_TOKEN=token)
        return subprocess.run([str(HUB_PUBLISH), *args, "--build-dir", str(build)], capture_output=True, text=True,
                              env=env, timeout=300).returncode

    assert publish_with(hub.write_token, "acme/no-such-kernels", "--version", "1") == 3  # no --create
    card = tmp_path / "README.md"
    card.write_text("# a card\n")
    assert publish_with(hub.read_token, REPO, "--version", "1", "--card", str(card)) == 7  # may not write
    assert publish_with(hub.write_token, REPO, "--version", "1", "--endpoint", "http://127.0.0.1:9") == 5
