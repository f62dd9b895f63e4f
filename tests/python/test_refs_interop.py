"""Branches, tags and versions resolve to a commit, recorded in the cache's refs/, the way kernels
0.19.1 does it; each client reads what the other wrote, offline.

Against `kernelhub serve` (which answers 0.19.1's GET /api/kernels/{id}/revision/{quoted-rev}), a
kernel with two versions, a tag and a branch whose name has a `/`:
  - kernels 0.19.1 loads each online, then kernelhub resolves and fetches each offline from the
    refs it wrote, with no request;
  - kernelhub fetches each online, then kernels 0.19.1 loads each offline from ours;
  - offline misses are errors in 0.19.1's words, from the Python shim word for word;
  - a refs/ file that is not a commit is a typed error that changes nothing in the cache.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("kernels")
pytest.importorskip("huggingface_hub")
from huggingface_hub import HfApi, constants  # noqa: E402

constants.HF_HUB_DISABLE_XET = True

from conftest import BUILD_DIR, KERNELHUB_BIN  # noqa: E402

REPO = "acme/refs-interop"
REFS = ["v1", "v2", "release-1", "feature/x"]


def _variant(root: Path, version: int) -> Path:
    """A pure-Python variant that says which version it is (its own metadata id per version, so
    one process may load both)."""
    variant = root / f"v{version}" / "build" / "torch-universal"
    variant.mkdir(parents=True)
    (variant / "__init__.py").write_text(f"def which():\n    return 'v{version}'\n")
    metadata = {"id": f"_refs_interop_v{version}", "name": "refs-interop", "version": version,
                "license": "apache-2.0", "python-depends": [], "backend": {"type": "cpu"}}
    (variant / "metadata.json").write_text(json.dumps(metadata))
    return variant.parent.parent


@pytest.fixture
def published(kernelhub_serve, tmp_path):
    server = kernelhub_serve()
    api = HfApi(endpoint=server.url, token=server.write_token)
    api.create_repo(REPO, repo_type="kernel")
    api.upload_folder(folder_path=str(_variant(tmp_path / "src", 1)), repo_id=REPO, repo_type="kernel",
                      commit_message="v1")
    first = api.list_repo_refs(REPO, repo_type="kernel").branches[0].target_commit
    api.create_branch(REPO, branch="v1", revision=first, repo_type="kernel")
    api.create_tag(REPO, tag="release-1", revision=first, repo_type="kernel")
    api.create_branch(REPO, branch="feature/x", revision=first, repo_type="kernel")
    api.upload_folder(folder_path=str(_variant(tmp_path / "src", 2)), repo_id=REPO, repo_type="kernel",
                      commit_message="v2")
    second = next(b.target_commit for b in api.list_repo_refs(REPO, repo_type="kernel").branches if b.name == "main")
    api.create_branch(REPO, branch="v2", revision=second, repo_type="kernel")
    assert first != second
    return server, {"v1": first, "v2": second, "release-1": first, "feature/x": first}


def _env(server, cache: Path, offline: bool = False) -> dict:
    env = server.client_env(cache)
    env["HF_HOME"] = str(cache.parent / "hf-home")
    env["PYTHONPATH"] = str(BUILD_DIR / "python")  # the shim, where a test imports it
    env.pop("KERNELHUB_TORCH", None)
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return env


def _python(server, cache: Path, code: str, offline: bool = False) -> subprocess.CompletedProcess:
    if "kernelhub" in code and not list((BUILD_DIR / "python" / "kernelhub").glob("_core*.so")):
        pytest.skip("kernelhub._core is not built in this build (a sanitizer build has no Python binding)")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=_env(server, cache, offline),
                          capture_output=True, text=True, timeout=300)


def _ours(server, cache: Path, *args: str, offline: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run([str(KERNELHUB_BIN), *args], env=_env(server, cache, offline), capture_output=True,
                          text=True, timeout=120)


def _asked(ref: str) -> list[str]:
    return ["--version", ref[1:]] if re.fullmatch(r"v\d+", ref) else ["--revision", ref]


def _kernels_call(ref: str) -> str:
    return f"version={int(ref[1:])}" if re.fullmatch(r"v\d+", ref) else f"revision={ref!r}"


def _requests(server) -> int:
    return len(server.log().splitlines())


def _load_each(server, cache: Path, module: str, offline: bool = False) -> list[str]:
    """`module`.get_kernel for each of REFS in one process; what each loaded says it is."""
    loads = "\n".join(f"print({module}.get_kernel({REPO!r}, {_kernels_call(ref)}).which())" for ref in REFS)
    result = _python(server, cache, f"import {module}\n{loads}\n", offline=offline)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.split()


def _refs(cache: Path) -> dict[str, str]:
    refs = cache / "kernels--acme--refs-interop" / "refs"
    return {str(p.relative_to(refs)): p.read_text() for p in refs.rglob("*") if p.is_file()}


def test_we_resolve_offline_from_the_refs_kernels_wrote(published, tmp_path):
    server, commits = published
    cache = tmp_path / "cache"
    assert _load_each(server, cache, "kernels") == ["v1", "v2", "v1", "v1"]
    # kernels asked `kernelhub serve` for each ref's commit, the name quoted as the Hub wants it.
    log = server.log()
    assert "GET /api/kernels/acme/refs-interop/revision/release-1 200" in log
    assert "GET /api/kernels/acme/refs-interop/revision/feature%2Fx 200" in log
    # It recorded them as a commit and nothing else.
    assert _refs(cache) == {ref: commits[ref] for ref in REFS}

    before = _requests(server)
    for ref in REFS:
        out = _ours(server, cache, "download", REPO, *_asked(ref), "--json", offline=True)
        assert out.returncode == 0, out.stdout + out.stderr
        fetched = json.loads(out.stdout)
        assert fetched["commit"] == commits[ref]
        assert fetched["variants"] == ["torch-universal"]
        decided = _ours(server, cache, "variants", REPO, *_asked(ref), "--json", offline=True)
        assert decided.returncode == 0, decided.stderr
        assert json.loads(decided.stdout)["revisions"][0]["chosen"] == "torch-universal"
    # And the shim (the C++ core behind it) loads each from them.
    assert _load_each(server, cache, "kernelhub", offline=True) == ["v1", "v2", "v1", "v1"]
    assert _requests(server) == before


def test_kernels_resolves_offline_from_the_refs_we_wrote(published, tmp_path):
    server, commits = published
    cache = tmp_path / "cache"
    for ref in REFS:
        out = _ours(server, cache, "download", REPO, *_asked(ref), "--json")
        assert out.returncode == 0, out.stdout + out.stderr
        assert json.loads(out.stdout)["commit"] == commits[ref]
    assert "GET /api/kernels/acme/refs-interop/revision/feature%2Fx 200" in server.log()
    # Exactly a commit, no newline, nothing left beside them.
    assert _refs(cache) == {ref: commits[ref] for ref in REFS}

    before = _requests(server)
    assert _load_each(server, cache, "kernels", offline=True) == ["v1", "v2", "v1", "v1"]
    assert _requests(server) == before


def test_offline_misses_are_errors_in_the_words_of_kernels(published, tmp_path):
    server, _ = published
    cache = tmp_path / "cache"
    # One version cached (through kernels), the rest not.
    assert _python(server, cache, f"import kernels; kernels.get_kernel({REPO!r}, version=1)").returncode == 0
    asks = ["revision='nope'", "version=3", "revision='v2'"]
    script = textwrap.dedent(f"""
        import json, {{module}}
        out = []
        for kwargs in {asks!r}:
            try:
                eval(f"{{module}}.get_kernel({REPO!r}, {{kwargs}})")
                out.append(None)
            except ValueError as e:
                out.append(str(e))
        print(json.dumps(out))
    """)
    theirs = _python(server, cache, script.replace("{module}", "kernels"), offline=True)
    ours = _python(server, cache, script.replace("{module}", "kernelhub"), offline=True)
    assert theirs.returncode == 0 and ours.returncode == 0, theirs.stderr + ours.stderr
    theirs, ours = json.loads(theirs.stdout), json.loads(ours.stdout)
    assert theirs[0] == (f"Cannot resolve revision 'nope' of '{REPO}' to a commit: the ref is not in the local cache "
                         "and Hugging Face Hub is in offline mode. Download the kernel while online first, or pass "
                         "an explicit `revision=<commit>`.")
    assert theirs[1] == "Version 3 not found, available versions: 1"
    assert theirs[2].startswith("Cannot resolve revision 'v2'")
    assert ours == theirs

    # Nothing cached at all: a version is "not available in the local cache".
    empty = tmp_path / "empty"
    theirs = _python(server, empty, script.replace("{module}", "kernels"), offline=True)
    ours = _python(server, empty, script.replace("{module}", "kernelhub"), offline=True)
    theirs, ours = json.loads(theirs.stdout), json.loads(ours.stdout)
    assert theirs[1] == (f"Version 3 of '{REPO}' is not available in the local cache and Hugging Face Hub is in "
                         "offline mode. Download the kernel while online first, or pass an explicit "
                         "`revision=<commit>`.")
    assert ours == theirs
    # The CLI and C++ say the same sentence, with their own way to name a commit.
    cli = _ours(server, empty, "variants", REPO, "--version", "3", offline=True)
    assert cli.returncode == 6
    assert f"Version 3 of '{REPO}' is not available in the local cache and Hugging Face Hub is in offline mode" \
        in cli.stderr
    assert "--revision <commit>" in cli.stderr


def test_a_ref_that_is_not_a_commit_is_a_typed_error_that_changes_nothing(published, tmp_path):
    server, commits = published
    cache = tmp_path / "cache"
    assert _ours(server, cache, "download", REPO, "--version", "1", "--json").returncode == 0
    ref = cache / "kernels--acme--refs-interop" / "refs" / "v1"
    ref.write_bytes(b"<html>not a commit</html>\n")
    snapshot = sorted(str(p.relative_to(cache)) + ("@" + os.readlink(p) if p.is_symlink() else "")
                      for p in cache.rglob("*"))

    decided = _ours(server, cache, "variants", REPO, "--version", "1", "--json", offline=True)
    assert decided.returncode == 9
    assert str(ref) in decided.stderr
    assert "holds `<html>not a commit</html>`; delete it" in decided.stderr
    shim = _python(server, cache, textwrap.dedent(f"""
        import kernelhub
        try:
            kernelhub.get_kernel({REPO!r}, version=1)
        except ValueError as e:
            print(type(e).__name__, e.code)
    """), offline=True)
    assert shim.stdout.split() == ["CorruptFileError", "corrupt_file"], shim.stdout + shim.stderr
    # kernels 0.19.1 refuses it too (a ValueError).
    theirs = _python(server, cache, f"import kernels\ntry:\n    kernels.get_kernel({REPO!r}, version=1)\n"
                                    "except ValueError as e:\n    print('ValueError')\n", offline=True)
    assert theirs.stdout.split() == ["ValueError"], theirs.stdout + theirs.stderr
    assert snapshot == sorted(str(p.relative_to(cache)) + ("@" + os.readlink(p) if p.is_symlink() else "")
                              for p in cache.rglob("*"))
    assert ref.read_bytes() == b"<html>not a commit</html>\n"

    # Online, the Hub's answer replaces it, as kernels replaces it.
    assert _ours(server, cache, "download", REPO, "--version", "1", "--json").returncode == 0
    assert ref.read_text() == commits["v1"]


def test_a_ref_the_hub_does_not_have_is_revision_not_found_and_records_nothing(published, tmp_path):
    server, _ = published
    cache = tmp_path / "cache"
    script = textwrap.dedent(f"""
        import {{module}}
        from huggingface_hub.errors import RevisionNotFoundError
        try:
            {{module}}.get_kernel({REPO!r}, revision="no-such-branch")
        except RevisionNotFoundError as e:
            print("RevisionNotFoundError")
    """)
    for module in ("kernels", "kernelhub"):
        result = _python(server, cache, script.replace("{module}", module))
        assert result.stdout.split() == ["RevisionNotFoundError"], module + result.stdout + result.stderr
    assert "GET /api/kernels/acme/refs-interop/revision/no-such-branch 404" in server.log()
    refs = cache / "kernels--acme--refs-interop" / "refs"
    assert not refs.exists() or _refs(cache) == {}
