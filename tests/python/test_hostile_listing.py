"""What a Hub lists besides the variant asked for is none of a load's business, and what it names is
printed harmlessly: a file outside build/ whose name could not be stored safely (`docs\\notes.md`)
changes nothing for `kernelhub get`, `download`, the shim or kernels 0.19.1, while one inside the
variant is refused; names with terminal escape sequences in them are printed escaped.

`kernelhub serve` refuses such names on upload, as the Hub does; they are put into its store
directly (a commit's file map, server/internal/kernelhub/server/internal/store.hpp), and the server started
again on that store serves them in its listing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import _start_server
from huggingface_hub import HfApi
from kernels_releases import kernels_env
from shim_support import BUILD, child_env, cpu_variant_dir, publish, require_shim

KERNELHUB = BUILD / "bin" / "kernelhub"
REPO = "acme/listing-kernels"
ESC = "\x1b[31m"
CSI = "\u009b31m"  # a C1 control: CSI to a terminal that reads them


def add_listed_files(server, repo: str, commit: str, paths: list[str]) -> None:
    """Adds `paths` (with the bytes of the commit's metadata.json) to a stored commit."""
    org, name = repo.split("/")
    file = server.root / "repos" / "kernels" / org / name / "commits" / f"{commit}.json"
    stored = json.loads(file.read_text())
    metadata = next(entry for path, entry in stored["files"].items() if path.endswith("/metadata.json"))
    for path in paths:
        stored["files"][path] = dict(metadata)
    file.write_text(json.dumps(stored))


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """acme/listing-kernels v1: the CPU variant, plus `docs\\notes.md`; acme/listing-inside v1: the
    CPU variant with an unsafe name inside it; acme/listing-escapes v1: the CPU variant, plus a
    variant folder whose name holds CSI and a file whose name holds ESC."""
    require_shim()
    folder = tmp_path_factory.mktemp("listing-hub")
    server = _start_server(folder, [])
    listed = {REPO: ["docs\\notes.md"],
              "acme/listing-inside": [f"build/{cpu_variant_dir().name}/..\\evil.py"],
              "acme/listing-escapes": [f"build/torch-{CSI}-cpu/metadata.json", f"docs/{ESC}red.md"]}
    commits = {repo: publish(server, repo) for repo in listed}
    server.stop()
    for repo, paths in listed.items():
        add_listed_files(server, repo, commits[repo], paths)
    server = _start_server(folder, [])  # the same store, now listing them
    yield server
    server.stop()


def kernelhub(server, cache: Path, *args: str) -> subprocess.CompletedProcess:
    env = child_env(server, cache, KERNELHUB_BACKEND="cpu")
    return subprocess.run([str(KERNELHUB), *args], capture_output=True, env=env, timeout=300)


def test_the_listing_holds_the_unsafe_name(hub):
    files = HfApi(endpoint=hub.url).list_repo_files(REPO, repo_type="kernel", revision="v1")
    assert "docs\\notes.md" in files


def test_a_file_outside_build_changes_nothing_for_get_download_and_the_shim(hub, tmp_path):
    got = kernelhub(hub, tmp_path / "cache", "get", REPO, "--version", "1", "--json")
    assert got.returncode == 0, got.stderr.decode()
    assert json.loads(got.stdout)["variant"] == cpu_variant_dir().name
    downloaded = kernelhub(hub, tmp_path / "cache2", "download", REPO, "--version", "1", "--json")
    assert downloaded.returncode == 0, downloaded.stderr.decode()
    # What the whole repo holds is what it asks for: that one is refused, as a corrupt listing.
    whole = kernelhub(hub, tmp_path / "cache3", "download", REPO, "--version", "1", "--all-files", "--json")
    assert whole.returncode == 9, whole.stderr.decode()
    assert json.loads(whole.stdout)["error"]["code"] == "corrupt_file"

    code = ("import json, sys, {pkg}\n"
            "m = {pkg}.get_kernel(sys.argv[1], version=1, backend='cpu')\n"
            "print(json.dumps(m.__name__))")
    for package in ("kernelhub", "kernels"):
        env = child_env(hub, tmp_path / f"shim-{package}")
        if package == "kernels":
            env = kernels_env(env)
        out = subprocess.run([sys.executable, "-c", code.format(pkg=package), REPO], capture_output=True, text=True,
                             env=env, timeout=300)
        assert out.returncode == 0, (package, out.stderr[-3000:])


def test_an_unsafe_name_inside_the_variant_is_refused(hub, tmp_path):
    got = kernelhub(hub, tmp_path / "cache", "get", "acme/listing-inside", "--version", "1", "--json")
    assert got.returncode == 9, got.stderr.decode()
    error = json.loads(got.stdout)["error"]
    assert error["code"] == "corrupt_file" and "..\\evil.py" in error["message"] and "backslash" in error["message"]
    assert not list((tmp_path / "cache").rglob("*.so"))  # nothing of it was downloaded


def test_names_with_terminal_escapes_are_printed_escaped(hub, tmp_path):
    variants = kernelhub(hub, tmp_path / "cache", "variants", "acme/listing-escapes")
    assert variants.returncode == 0, variants.stderr.decode()
    listed = variants.stdout.decode()
    assert "torch-\\u009b31m-cpu" in listed
    whole = kernelhub(hub, tmp_path / "cache", "download", "acme/listing-escapes", "--version", "1", "--all-files")
    assert whole.returncode == 9
    said = whole.stderr.decode()
    assert "docs/\\x1b[31mred.md" in said
    for output in (variants.stdout, variants.stderr, whole.stdout, whole.stderr):
        assert b"\x1b" not in output and b"\xc2\x9b" not in output
