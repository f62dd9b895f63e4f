"""Both build layouts, signed and unsigned, through every client, against `kernelhub serve`.

hub-publish publishes the reference kernels' CPU variant four ways (`--layout files|zip`, with and
without `--sign-key`); then kernels 0.19.1, kernels 0.17.2 (what users of older releases run), our
C++ loader (`kernelhub get`) and our Python shim each load every one and call an op. The signature
sits beside the variant folder (docs/SIGNING.md), where kernels' digest check does not see it; the
zip layout asks for kernels >= 0.19.0, so 0.17.2 refuses it with a message that says so. Then bad
archives (a member outside the package, a symlink, a cut archive, bytes that do not match the
digest), each refused before anything imports it, with a typed error, the cache left whole.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, HfApi, constants
from huggingface_hub.utils import close_session
from shim_support import BUILD, PACKAGE_DIR, child_env, cpu_variant_dir, require_shim, run_json

constants.HF_HUB_DISABLE_XET = True

ROOT = Path(__file__).resolve().parents[2]
KERNELHUB = BUILD / "bin" / "kernelhub"
HUB_PUBLISH = BUILD / "bin" / "hub-publish"
KERNELS_0172 = ROOT / ".venv" / "oracles" / "kernels-0.17.2"
LAYOUTS = ("files", "zip")

# Loads REPO v1 with a client and checks one op against its float reference; prints JSON.
CALL_AN_OP = textwrap.dedent("""
    import json, sys, torch
    repo = sys.argv[1]
    kernel = get_kernel(repo)
    x = torch.randn(4, 64)
    w = torch.rand(64) + 0.5
    y = kernel.rms_norm(x, w, 1e-6)
    ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    torch.testing.assert_close(y, ref, atol=1e-5, rtol=1e-5)
    print(json.dumps({"file": kernel.__file__, "path": list(getattr(kernel, "__path__", []))}))
""")
KERNELS_GET = "from kernels import get_kernel as _get\nget_kernel = lambda repo: _get(repo, version=1, backend='cpu')\n"
SHIM_GET = "from kernelhub import get_kernel as _get\nget_kernel = lambda repo: _get(repo, version=1, backend='cpu')\n"


def repo_of(layout: str, signed: bool) -> str:
    return f"acme/layout-{layout}-{'signed' if signed else 'unsigned'}"


def hub_publish(server, build_dir: Path, repo: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_ENDPOINT=server.url, HF_TOKEN=server.write_token, HF_HOME=str(build_dir.parent / "hf"))
    env.pop("HF_HUB_OFFLINE", None)
    return subprocess.run([str(HUB_PUBLISH), repo, "--build-dir", str(build_dir), "--version", "1", "--create",
                           "--json", "--quiet", *args], capture_output=True, text=True, env=env, timeout=600)


@pytest.fixture(scope="module")
def published(hub_server, tmp_path_factory):
    """The four repos, one hub-publish each from a private copy of the CPU variant."""
    if not HUB_PUBLISH.exists() or not KERNELHUB.exists():
        pytest.skip(f"{HUB_PUBLISH} or {KERNELHUB} is not built")
    require_shim()
    tmp = tmp_path_factory.mktemp("layouts")
    key = tmp / "acme.key"
    made = subprocess.run([str(KERNELHUB), "keygen", "--out", str(key)], capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    reports = {}
    for layout in LAYOUTS:
        for signed in (False, True):
            build_dir = tmp / f"{layout}-{signed}" / "build"
            shutil.copytree(cpu_variant_dir(), build_dir / cpu_variant_dir().name,
                            ignore=shutil.ignore_patterns("__pycache__"))
            r = hub_publish(hub_server, build_dir, repo_of(layout, signed), "--layout", layout,
                            *(["--sign-key", str(key)] if signed else []))
            assert r.returncode == 0, r.stderr
            reports[(layout, signed)] = json.loads(r.stdout)
    yield {"server": hub_server, "key": key, "public": Path(f"{key}.pub").read_text().strip(), "reports": reports,
           "tmp": tmp}
    close_session()


def variant_files(published, layout: str, signed: bool) -> dict:
    return {f["path"]: f["size"] for f in published["reports"][(layout, signed)]["files"]}


def test_hub_publish_writes_each_layout_and_signs_it_in_the_folder(published):
    name = cpu_variant_dir().name
    meta = json.loads((cpu_variant_dir() / "metadata.json").read_text())
    for layout in LAYOUTS:
        for signed in (False, True):
            files = variant_files(published, layout, signed)
            # A Sigstore bundle in the folder, which every kernels release leaves out of its digest.
            assert (f"build/{name}/metadata.json.sigstore" in files) is signed
            assert not any(path.endswith("kernelhub.sig") for path in files)  # the legacy format (layout v1)
            files = {path: size for path, size in files.items() if not path.endswith(".sigstore")}
            inside = {path.removeprefix(f"build/{name}/") for path in files if path.startswith(f"build/{name}/")}
            if layout == "files":
                assert {"__init__.py", "_ops.py", "metadata.json", f"{meta['id']}.abi3.so"} <= inside
            else:
                # Beside the archive: the library, and what is read without importing anything.
                assert inside == {"metadata.json", "symbols.json", "op_schemas.json", f"{meta['id']}.abi3.so",
                                  f"{meta['id']}.zip"}
            variant = published["reports"][(layout, signed)]["variants"][0]
            assert (variant["layout"], variant["signed"]) == (layout, signed)


def test_the_zip_is_deterministic_and_metadata_asks_for_a_kernels_that_reads_it(published, tmp_path):
    server = published["server"]
    name = cpu_variant_dir().name
    meta = json.loads((cpu_variant_dir() / "metadata.json").read_text())
    api = HfApi(endpoint=server.url, token=server.write_token)
    got = Path(api.snapshot_download(repo_of("zip", False), repo_type="kernel", revision="v1",
                                     cache_dir=tmp_path / "hf"))
    variant = got / "build" / name
    published_meta = json.loads((variant / "metadata.json").read_text())
    assert published_meta["build-layout"] == "zip" and published_meta["kernels-minver"] == "0.19.0"
    assert published_meta["id"] == meta["id"] and published_meta["provenance"] == meta["provenance"]
    # The digest covers the archive as one file, and the library beside it.
    assert set(published_meta["digest"]["files"]) == {f"{meta['id']}.zip", f"{meta['id']}.abi3.so", "symbols.json",
                                                      "op_schemas.json"}
    archive = variant / f"{meta['id']}.zip"
    expected = base64.b64encode(hashlib.sha256(archive.read_bytes()).digest()).decode()
    assert published_meta["digest"]["files"][f"{meta['id']}.zip"] == expected
    with zipfile.ZipFile(archive) as z:
        infos = z.infolist()
        assert [i.filename for i in infos] == sorted(i.filename for i in infos)
        assert {i.filename for i in infos} == {p.name for p in cpu_variant_dir().iterdir() if p.suffix == ".py"}
        assert all(i.date_time == (1980, 1, 1, 0, 0, 0) and i.compress_type == zipfile.ZIP_STORED for i in infos)
        for info in infos:
            assert z.read(info) == (cpu_variant_dir() / info.filename).read_bytes()
    # The signed repo's archive is the same bytes: same files, same archive.
    signed = variant_files(published, "zip", True)
    assert signed[f"build/{name}/{meta['id']}.zip"] == archive.stat().st_size


def test_republishing_the_zip_layout_changes_nothing(published):
    build_dir = published["tmp"] / "zip-True" / "build"
    r = hub_publish(published["server"], build_dir, repo_of("zip", True), "--layout", "zip", "--sign-key",
                    str(published["key"]))
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert not report["committed"], report["files"]
    assert {f["action"] for f in report["files"]} == {"unchanged"}


def run_client(script: str, env: dict, repo: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script, repo], capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("signed", [False, True], ids=["unsigned", "signed"])
def test_kernels_0_19_1_loads_what_we_publish(published, tmp_path, layout, signed):
    env = published["server"].client_env(tmp_path / "cache")
    env.pop("LOCAL_KERNELS", None)
    r = run_client(KERNELS_GET + CALL_AN_OP, env, repo_of(layout, signed))
    assert r.returncode == 0, r.stdout + r.stderr[-4000:]
    loaded = json.loads(r.stdout.strip().splitlines()[-1])
    meta = json.loads((cpu_variant_dir() / "metadata.json").read_text())
    if layout == "zip":
        assert loaded["file"].endswith(f"{meta['id']}.zip/__init__.py")
        assert loaded["path"][1].endswith(f"{meta['id']}.zip")
    assert "Unknown file" not in r.stderr


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("signed", [False, True], ids=["unsigned", "signed"])
def test_kernels_0_17_2_loads_the_files_layout_and_names_the_version_the_zip_layout_needs(
        published, tmp_path, layout, signed):
    if not (KERNELS_0172 / "kernels").is_dir():
        pytest.skip(f"kernels 0.17.2 is not installed in {KERNELS_0172}")
    env = published["server"].client_env(tmp_path / "cache")
    env.pop("LOCAL_KERNELS", None)
    env["PYTHONPATH"] = os.pathsep.join([str(KERNELS_0172), *filter(None, [os.environ.get("PYTHONPATH")])])
    script = "import kernels\nassert kernels.__version__ == '0.17.2', kernels.__version__\n" + KERNELS_GET + CALL_AN_OP
    r = run_client(script, env, repo_of(layout, signed))
    if layout == "files":
        assert r.returncode == 0, r.stdout + r.stderr[-4000:]
    else:
        assert r.returncode != 0
        assert "requires kernels>=0.19.0, but version 0.17.2 is installed" in r.stderr


def kernelhub_get(published, cache: Path, repo: str, *args: str, **env_extra: str) -> subprocess.CompletedProcess:
    env = published["server"].client_env(cache)
    for name in ("LOCAL_KERNELS", "KERNELHUB_TRUSTED_KEYS", "KERNELHUB_REQUIRE_SIGNATURE"):
        env.pop(name, None)
    env.update(XDG_CONFIG_HOME=str(cache.parent / "config"), XDG_STATE_HOME=str(cache.parent / "state"), **env_extra)
    return subprocess.run([str(KERNELHUB), "get", repo, "--version", "1", "--backend", "cpu", "--json", *args],
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("signed", [False, True], ids=["unsigned", "signed"])
def test_our_cpp_loader_loads_both_layouts_and_checks_the_signature(published, tmp_path, layout, signed):
    trusted = {"KERNELHUB_TRUSTED_KEYS": f"acme={published['public']}"} if signed else {}
    r = kernelhub_get(published, tmp_path / "cache", repo_of(layout, signed), *(["--require-signature"] * signed),
                      **trusted)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert "rms_norm" in [op["name"] for op in got["ops"]]
    meta = json.loads((cpu_variant_dir() / "metadata.json").read_text())
    assert got["namespace"] == meta["id"]  # the library beside the archive, in the zip layout
    assert (Path(got["path"]) / f"{meta['id']}.abi3.so").is_file()
    if signed:
        # The bundle came down in the folder, and a key that did not sign it is refused.
        assert (Path(got["path"]) / "metadata.json.sigstore").is_file()
        other = tmp_path / "other.key"
        assert subprocess.run([str(KERNELHUB), "keygen", "--out", str(other)], capture_output=True).returncode == 0
        refused = kernelhub_get(published, tmp_path / "cache2", repo_of(layout, signed),
                                KERNELHUB_TRUSTED_KEYS=f"acme={Path(f'{other}.pub').read_text().strip()}")
        # Refused whether this machine verified the bundle before (its signer, a key not configured
        # now, is not accepted) or not (the configured key does not verify it).
        assert refused.returncode == 8, refused.stderr
        assert "not a signer accepted" in refused.stderr or "verifies it" in refused.stderr
    else:
        refused = kernelhub_get(published, tmp_path / "cache", repo_of(layout, signed),
                                KERNELHUB_TRUSTED_KEYS=f"acme={published['public']}")
        assert refused.returncode == 8 and "is not signed" in refused.stderr


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("signed", [False, True], ids=["unsigned", "signed"])
def test_our_python_shim_loads_both_layouts(published, tmp_path, layout, signed):
    extra = {"KERNELHUB_TRUSTED_KEYS": f"acme={published['public']}", "KERNELHUB_REQUIRE_SIGNATURE": "1"} if signed \
        else {}
    env = child_env(published["server"], tmp_path / "cache", XDG_STATE_HOME=str(tmp_path / "state"),
                    XDG_CONFIG_HOME=str(tmp_path / "config"), **extra)
    script = SHIM_GET + CALL_AN_OP.replace(
        "print(json.dumps({", "import kernelhub\nprint(json.dumps({'shim': kernelhub.__file__, ")
    loaded = run_json(script, env, repo_of(layout, signed))
    assert Path(loaded["shim"]).parent == PACKAGE_DIR / "kernelhub"
    meta = json.loads((cpu_variant_dir() / "metadata.json").read_text())
    if layout == "zip":
        assert loaded["file"].endswith(f"{meta['id']}.zip/__init__.py")
        assert [Path(p).name for p in loaded["path"]] == [cpu_variant_dir().name, f"{meta['id']}.zip"]


def test_local_kernels_in_the_zip_layout_load_through_the_shim_and_the_cpp_loader(published, tmp_path):
    api = HfApi(endpoint=published["server"].url, token=published["server"].write_token)
    got = Path(api.snapshot_download(repo_of("zip", False), repo_type="kernel", revision="v1",
                                     cache_dir=tmp_path / "hf"))
    local = tmp_path / "local"
    shutil.copytree(got, local, symlinks=False)
    env = child_env(published["server"], tmp_path / "cache", LOCAL_KERNELS=f"acme/anything={local}")
    loaded = run_json(SHIM_GET + CALL_AN_OP, env, "acme/anything")
    assert loaded["file"].endswith(".zip/__init__.py")
    r = kernelhub_get(published, tmp_path / "cache", "acme/anything", LOCAL_KERNELS=f"acme/anything={local}")
    assert r.returncode == 0, r.stderr
    assert "rms_norm" in [op["name"] for op in json.loads(r.stdout)["ops"]]


# ---------------------------------------------------------------------------------------------
# Bad archives. Each is published as the zip layout with a digest that matches its bytes (except
# the digest case), so only the archive check stands between it and an import.


def zip_variant(dest: Path, members: list[tuple[zipfile.ZipInfo | str, bytes]], *, cut: int | None = None,
                stale_digest: bool = False) -> Path:
    """A zip-layout copy of the CPU variant at `dest`, its package archive holding `members`."""
    source = cpu_variant_dir()
    meta = json.loads((source / "metadata.json").read_text())
    dest.mkdir(parents=True)
    shutil.copy2(source / f"{meta['id']}.abi3.so", dest)
    archive = dest / f"{meta['id']}.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for info, data in members:
            z.writestr(info, data)
    if cut is not None:
        archive.write_bytes(archive.read_bytes()[:cut])
    files = {p.name: base64.b64encode(hashlib.sha256(p.read_bytes()).digest()).decode()
             for p in sorted(dest.iterdir())}
    if stale_digest:
        archive.write_bytes(archive.read_bytes().replace(b"RMSNorm", b"RMSNoRM"))
    meta.update({"build-layout": "zip", "kernels-minver": "0.19.0", "digest": {"algorithm": "sha256", "files": files}})
    (dest / "metadata.json").write_text(json.dumps(meta, indent=2))
    return dest


def package_members() -> list[tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in sorted(cpu_variant_dir().iterdir()) if p.suffix == ".py"]


def symlink_member() -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo("evil.py")
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, b"/etc/passwd"


BAD_ARCHIVES = {
    "member-climbing-out": (dict(extra=[("../../evil.py", b"import os\n")]), "corrupt_file", "climbs out"),
    "absolute-member": (dict(extra=[("/tmp/evil.py", b"import os\n")]), "corrupt_file", "absolute path"),
    "symlink-member": (dict(extra=[symlink_member()]), "corrupt_file", "member `evil.py`: a symbolic link"),
    "cut-archive": (dict(cut=-40), "corrupt_file", "cut short or damaged"),
    "bytes-not-the-digest": (dict(stale_digest=True), "integrity_mismatch", "do not match metadata.json `digest`"),
}


@pytest.fixture(scope="module")
def bad_repos(hub_server, tmp_path_factory):
    """Each bad archive published as acme/bad-<case> v1 (straight through the Hub API: hub-publish
    refuses them, as test_hub_publish_refuses_a_bad_archive shows)."""
    require_shim()
    tmp = tmp_path_factory.mktemp("bad-archives")
    api = HfApi(endpoint=hub_server.url, token=hub_server.write_token)
    name = cpu_variant_dir().name
    for case, (how, _, _) in BAD_ARCHIVES.items():
        members = package_members() + how.get("extra", [])
        size = None
        if "cut" in how:
            probe = zip_variant(tmp / case / "probe", members)
            size = (probe / f"{json.loads((probe / 'metadata.json').read_text())['id']}.zip").stat().st_size + how["cut"]
        variant = zip_variant(tmp / case / name, members, cut=size, stale_digest=how.get("stale_digest", False))
        repo = f"acme/bad-{case}"
        api.create_repo(repo, repo_type="kernel", exist_ok=True)
        api.create_branch(repo, repo_type="kernel", branch="v1", exist_ok=True)
        ops = [CommitOperationAdd(path_in_repo=f"build/{name}/{f.name}", path_or_fileobj=str(f))
               for f in sorted(variant.iterdir())]
        api.create_commit(repo, repo_type="kernel", revision="v1", operations=ops, commit_message="bad")
    yield {"server": hub_server, "tmp": tmp}
    close_session()


def cache_state(cache: Path) -> dict:
    """Every file in the cache and its bytes (links as their targets)."""
    if not cache.exists():
        return {}
    return {p.relative_to(cache).as_posix(): (os.readlink(p) if p.is_symlink() else p.read_bytes())
            for p in sorted(cache.rglob("*")) if p.is_file() or p.is_symlink()}


@pytest.mark.parametrize("case", BAD_ARCHIVES)
def test_a_bad_archive_is_refused_by_the_cpp_loader_and_the_cache_stays_whole(bad_repos, tmp_path, case):
    _, _, words = BAD_ARCHIVES[case]
    cache = tmp_path / "cache"
    state = tmp_path / "state"
    r = kernelhub_get(bad_repos, cache, f"acme/bad-{case}")
    assert r.returncode == 9, r.stdout
    assert words in r.stderr
    assert "Do not load it" in r.stderr or "download it again" in r.stderr
    after_first = cache_state(cache)
    assert not [p for p in after_first if p.endswith(".incomplete") or ".tmp" in p], after_first
    stamps = state / "kernelhub" / "verified"
    assert not stamps.exists() or not any(stamps.iterdir()), "a refused variant left a verification stamp"
    # Again, from the cache: the same refusal, and the cache unchanged by it.
    again = kernelhub_get(bad_repos, cache, f"acme/bad-{case}", "--offline")
    assert again.returncode == 9 and words in again.stderr
    assert cache_state(cache) == after_first


@pytest.mark.parametrize("case", BAD_ARCHIVES)
def test_a_bad_archive_is_refused_by_the_shim_before_anything_is_imported(bad_repos, tmp_path, case):
    _, code, words = BAD_ARCHIVES[case]
    if case == "bytes-not-the-digest":  # the shim speaks as kernels 0.19.1 (fetch/internal/kernelhub/fetch/internal/variant_checks.hpp)
        words = "the files do not match the digest in the metadata"
    env = child_env(bad_repos["server"], tmp_path / "cache", XDG_STATE_HOME=str(tmp_path / "state"))
    script = textwrap.dedent("""
        import json, sys
        import kernelhub
        from kernelhub import errors
        before = set(sys.modules)
        try:
            kernelhub.get_kernel(sys.argv[1], version=1, backend="cpu")
        except errors.KernelhubError as e:
            new = sorted(m for m in set(sys.modules) - before if m.startswith("_reference_kernels"))
            print(json.dumps({"class": type(e).__name__, "code": e.code, "message": str(e), "imported": new,
                              "runtime_error": isinstance(e, RuntimeError), "value_error": isinstance(e, ValueError)}))
    """)
    got = run_json(script, env, f"acme/bad-{case}")
    assert got["code"] == code and words in got["message"], got
    assert got["imported"] == []
    # A digest mismatch is the RuntimeError kernels raises for it; a hostile archive a ValueError.
    assert got["runtime_error"] if code == "integrity_mismatch" else got["value_error"]


def test_hub_publish_refuses_a_bad_archive_and_sends_nothing(bad_repos, kernelhub_serve, tmp_path):
    server = kernelhub_serve()
    name = cpu_variant_dir().name
    build_dir = tmp_path / "build"
    zip_variant(build_dir / name, package_members() + [("../../evil.py", b"import os\n")])
    before = server.log()
    r = hub_publish(server, build_dir, "acme/bad")
    assert r.returncode == 2
    assert "climbs out of the package" in r.stderr and "nothing was published" in r.stderr
    assert server.log() == before

    # And one built in the zip layout cannot be published as files (there is nothing to unpack it from).
    good = tmp_path / "good" / "build"
    zip_variant(good / name, package_members())
    r = hub_publish(server, good, "acme/good", "--layout", "files", "--dry-run")
    assert r.returncode == 2 and "built in the zip layout" in r.stderr
    r = hub_publish(server, good, "acme/good", "--dry-run")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["variants"][0]["layout"] == "zip"


def test_an_old_signature_is_not_published_and_a_stale_bundle_is_refused(published, kernelhub_serve, tmp_path):
    server = kernelhub_serve()
    name = cpu_variant_dir().name
    build_dir = tmp_path / "build"
    shutil.copytree(cpu_variant_dir(), build_dir / name, ignore=shutil.ignore_patterns("__pycache__"))
    (build_dir / name / "kernelhub.sig").write_text("what kernelhub wrote in its legacy layout v1\n")
    r = hub_publish(server, build_dir, "acme/legacy", "--dry-run")
    assert r.returncode == 2 and "kernels >= 0.18 refuses" in r.stderr
    (build_dir / f"{name}.kernelhub.sig").write_text("what kernelhub wrote beside the folder in its legacy layout v2\n")
    r = hub_publish(server, build_dir, "acme/legacy", "--dry-run")
    assert r.returncode == 2 and f"{name}.kernelhub.sig: kernelhub's signature format of before 2026-12" in r.stderr
    # Signing anew drops both, and writes nothing into the build folder.
    r = hub_publish(server, build_dir, "acme/legacy", "--sign-key", str(published["key"]))
    assert r.returncode == 0, r.stderr
    assert not (build_dir / name / "metadata.json.sigstore").exists()
    (build_dir / name / "kernelhub.sig").unlink()
    (build_dir / f"{name}.kernelhub.sig").unlink()
    # A bundle in the folder that signs another metadata.json (changed after `kernelhub sign`) is
    # not published: the variant would not load.
    assert subprocess.run([str(KERNELHUB), "sign", str(build_dir / name), "--key", str(published["key"])],
                          capture_output=True).returncode == 0
    meta = json.loads((build_dir / name / "metadata.json").read_text())
    meta["version"] = meta["version"]  # the same content, written again in another form
    (build_dir / name / "metadata.json").write_text(json.dumps(meta))
    r = hub_publish(server, build_dir, "acme/legacy", "--dry-run")
    assert r.returncode == 2 and "does not sign this metadata.json" in r.stderr


# ---------------------------------------------------------------------------------------------
# metadata.json backend types of kernels 0.19: `agnostic`, and one a newer kernel-builder may write.


@pytest.mark.parametrize("backend", ["agnostic", "quantum-accelerator"])
def test_an_agnostic_or_unknown_backend_loads_as_in_kernels_0_19_1_and_is_refused_only_when_used(
        published, kernelhub_serve, tmp_path, backend):
    name = cpu_variant_dir().name
    local = tmp_path / "build"
    shutil.copytree(cpu_variant_dir(), local / name, ignore=shutil.ignore_patterns("__pycache__"))
    meta = json.loads((local / name / "metadata.json").read_text())
    meta["backend"] = {"type": backend, "archs": ["sm_90"]}  # metadata.json is outside its own digest
    (local / name / "metadata.json").write_text(json.dumps(meta, indent=2))
    env = child_env(published["server"], tmp_path / "cache", LOCAL_KERNELS=f"acme/typed={local.parent}")
    # kernels 0.19.1 parses it and loads the variant (only its arch check reads the backend type).
    script = ("import sys, pathlib\nfrom kernels import get_local_kernel\n"
              f"get_kernel = lambda repo: get_local_kernel(pathlib.Path({str(local.parent)!r}), backend='cpu')\n"
              + CALL_AN_OP)
    r = run_client(script, env, "acme/typed")
    assert r.returncode == 0, r.stderr[-3000:]
    # So do our shim and our C++ loader.
    run_json(SHIM_GET + CALL_AN_OP, env, "acme/typed")
    got = kernelhub_get(published, tmp_path / "cache", "acme/typed", LOCAL_KERNELS=f"acme/typed={local.parent}")
    assert got.returncode == 0, got.stderr
    # hub-publish acts on the type (it checks it against the variant's name): an unknown one is
    # refused in kernels' words, an agnostic one is not.
    r = hub_publish(kernelhub_serve(), local, "acme/typed", "--dry-run")
    if backend == "agnostic":
        assert r.returncode == 0, r.stderr
    else:
        assert r.returncode == 2
        assert "`quantum-accelerator`" in r.stderr and "may require a newer version of `kernels`" in r.stderr


def legacy_sign(variant: Path, key: Path, repo: str, version: int) -> bytes:
    """The signature file kernelhub wrote before 2026-12 (docs/SIGNING.md, "kernelhub.sig"): an
    Ed25519 signature over a manifest of every file of the folder, made here as the format says."""
    from cryptography.hazmat.primitives import serialization

    private = serialization.load_pem_private_key(key.read_bytes(), password=None)
    raw = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    lines = ["kernelhub-manifest v1", f"repo {repo}", f"version {version}", f"variant {variant.name}",
             "source-commit none", "serial 1764480000"]
    for f in sorted((p for p in variant.rglob("*") if p.is_file()), key=lambda p: p.relative_to(variant).as_posix()):
        data = f.read_bytes()
        lines.append(f"file {hashlib.sha256(data).hexdigest()} {len(data)} {f.relative_to(variant).as_posix()}")
    manifest = ("\n".join(lines) + "\n").encode()
    signature = base64.b64encode(private.sign(manifest)).decode()
    return f"kernelhub-signature v1 {hashlib.sha256(raw).hexdigest()[:16]} {signature}\n".encode() + manifest


def test_a_repo_signed_inside_the_folder_before_keeps_verifying_with_kernelhub(published, tmp_path):
    """What kernelhub published signed before 2026-12: `<variant>/kernelhub.sig` inside the folder.
    kernelhub (C++ and the shim) still verifies it where its key is trusted; kernels 0.17.2 loads it;
    kernels 0.19.1 refuses it (docs/SIGNING.md)."""
    server = published["server"]
    name = cpu_variant_dir().name
    variant = tmp_path / "build" / name
    shutil.copytree(cpu_variant_dir(), variant, ignore=shutil.ignore_patterns("__pycache__"))
    signature = legacy_sign(variant, published["key"], "acme/legacy-signed", 1)
    (variant / "kernelhub.sig").write_bytes(signature)
    api = HfApi(endpoint=server.url, token=server.write_token)
    api.create_repo("acme/legacy-signed", repo_type="kernel", exist_ok=True)
    api.create_branch("acme/legacy-signed", repo_type="kernel", branch="v1", exist_ok=True)
    api.create_commit("acme/legacy-signed", repo_type="kernel", revision="v1", commit_message="signed, 2026-11",
                      operations=[CommitOperationAdd(path_in_repo=f"build/{name}/{f.name}", path_or_fileobj=str(f))
                                  for f in sorted(variant.iterdir())])
    trusted = {"KERNELHUB_TRUSTED_KEYS": f"acme={published['public']}"}
    r = kernelhub_get(published, tmp_path / "cache", "acme/legacy-signed", "--require-signature", **trusted)
    assert r.returncode == 0, r.stderr
    env = child_env(server, tmp_path / "shim-cache", XDG_STATE_HOME=str(tmp_path / "state"),
                    KERNELHUB_REQUIRE_SIGNATURE="1", **trusted)
    run_json(SHIM_GET + CALL_AN_OP, env, "acme/legacy-signed")
    # A wrong byte is still caught through the legacy signature.
    other = tmp_path / "other.key"
    assert subprocess.run([str(KERNELHUB), "keygen", "--out", str(other)], capture_output=True).returncode == 0
    r = kernelhub_get(published, tmp_path / "cache3", "acme/legacy-signed",
                      KERNELHUB_TRUSTED_KEYS=f"acme={Path(f'{other}.pub').read_text().strip()}")
    assert r.returncode == 8 and "does not verify with any trusted key" in r.stderr

    clients = server.client_env(tmp_path / "kernels-cache")
    clients.pop("LOCAL_KERNELS", None)
    refused = run_client(KERNELS_GET + CALL_AN_OP, clients, "acme/legacy-signed")
    assert refused.returncode != 0 and "kernelhub.sig" in refused.stderr
    if (KERNELS_0172 / "kernels").is_dir():
        clients["PYTHONPATH"] = os.pathsep.join([str(KERNELS_0172), *filter(None, [os.environ.get("PYTHONPATH")])])
        clients["HF_HUB_CACHE"] = clients["KERNELS_CACHE"] = str(tmp_path / "kernels-0172-cache")
        loaded = run_client(KERNELS_GET + CALL_AN_OP, clients, "acme/legacy-signed")
        assert loaded.returncode == 0, loaded.stderr[-3000:]