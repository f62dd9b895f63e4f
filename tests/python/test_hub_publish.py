"""hub-publish end to end, with clients we did not write.

Build dir → `hub-publish` to `kernelhub serve` → the real huggingface_hub `snapshot_download` gets
identical bytes → the real `kernels` package's `get_kernel(repo, version=1)` loads it and calls an
op → our C++ `kernelhub get` loads it. Then: republishing makes no commit; a server that drops the
connection mid-upload fails the first run and a rerun finishes with exactly one commit, sending
only what was missing; bad input is refused with every problem listed and nothing sent.
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from huggingface_hub import HfApi, constants, snapshot_download
from huggingface_hub.utils import close_session
from kernels_releases import RELEASES, kernels_env

constants.HF_HUB_DISABLE_XET = True

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
HUB_PUBLISH = BUILD / "bin" / "hub-publish"
KERNELHUB = BUILD / "bin" / "kernelhub"
REPO = "acme/reference-kernels"


@pytest.fixture(autouse=True)
def close_hub_connections(kernelhub_serve):
    """Close huggingface_hub's keep-alive connections after each test, so the server stops at once."""
    yield
    close_session()


@pytest.fixture
def build_dir(tmp_path):
    """A private copy of the CMake-built variants (hub-publish may add digests or signatures)."""
    source = BUILD / "kernels" / "build"
    if not HUB_PUBLISH.exists():
        pytest.skip(f"{HUB_PUBLISH} is not built")
    if not source.is_dir():
        pytest.skip(f"{source} is not built (the reference kernels)")
    copy = tmp_path / "variants"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def cpu_variant(build_dir: Path) -> Path:
    (found,) = [p for p in build_dir.iterdir() if p.name.startswith("torch") and "-cpu-" in p.name and p.is_dir()]
    return found


def hub_publish(server, build_dir: Path, *args, token=None):
    env = dict(os.environ, HF_ENDPOINT=server.url, HF_TOKEN=token or server.write_token,
               HF_HOME=str(build_dir.parent / "hf-home"))
    env.pop("HF_HUB_OFFLINE", None)
    return subprocess.run([str(HUB_PUBLISH), REPO, "--build-dir", str(build_dir), *args], capture_output=True,
                          text=True, env=env, timeout=600)


def local_files(build_dir: Path) -> dict:
    return {f"build/{p.relative_to(build_dir).as_posix()}": p.read_bytes()
            for p in sorted(build_dir.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def commits_on(server, branch: str) -> list:
    api = HfApi(endpoint=server.url, token=server.write_token)
    return [c.commit_id for c in api.list_repo_commits(REPO, repo_type="kernel", revision=branch)]


def uploads_in_log(server) -> int:
    return sum(1 for line in server.log().splitlines()
               if line.startswith("PUT ") or any(k in line for k in ("/preupload/", "objects/batch", "/commit/")))


def test_round_trip_with_huggingface_hub_kernels_and_our_loader(kernelhub_serve, build_dir, tmp_path):
    # Chunks of at most half the largest file, so that it goes up in parts however large the build
    # makes it (2.2 MB in the -O1 sanitizer build, over 4 MB with -O2 -g).
    largest = max(p.stat().st_size for p in build_dir.rglob("*") if p.is_file())
    chunk = min(4 << 20, max(64 << 10, largest // 2))
    server = kernelhub_serve("--lfs-threshold", "4096", "--multipart-chunk", str(chunk))
    r = hub_publish(server, build_dir, "--version", "1", "--create", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["committed"] and report["branch_created"] and report["branch"] == "v1"
    assert report["lfs"]["objects_sent"] >= 1 and report["lfs"]["multipart_objects"] >= 1
    assert report["commit_url"].endswith(report["commit"])
    assert commits_on(server, "v1")[0] == report["commit"]

    # The real huggingface_hub gets exactly our bytes back.
    snapshot = Path(snapshot_download(REPO, repo_type="kernel", revision="v1", endpoint=server.url,
                                      cache_dir=tmp_path / "hf-cache", token=server.write_token))
    remote = {p.relative_to(snapshot).as_posix(): p.read_bytes() for p in snapshot.rglob("*") if p.is_file()}
    assert {k: v for k, v in remote.items() if k.startswith("build/")} == local_files(build_dir)

    # The real `kernels` package loads the CPU variant and calls an op: today's release, and the one
    # users of older releases run.
    cache = tmp_path / "kernels-cache"
    env = server.client_env(cache)
    script = textwrap.dedent(f"""
        import torch, kernels
        kernel = kernels.get_kernel({REPO!r}, version=1, backend="cpu")
        x = torch.randn(8, 64)
        w = torch.rand(64) + 0.5
        y = kernel.rms_norm(x, w, 1e-6)
        ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
        torch.testing.assert_close(y, ref, atol=1e-5, rtol=1e-5)
        print("ok")
    """)
    for release in RELEASES:
        result = subprocess.run([sys.executable, "-c", script], env=kernels_env(env, release), capture_output=True,
                                text=True, timeout=300)
        assert result.returncode == 0, release + result.stdout + result.stderr
        assert "ok" in result.stdout

    # Our C++ loader gets it through the Hub path too.
    result = subprocess.run([str(KERNELHUB), "get", REPO, "--version", "1", "--json"], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    assert got["revision"] == report["commit"]
    assert "rms_norm" in [op["name"] for op in got["ops"]]

    # Identical content: no new commit, and no content sent.
    before = uploads_in_log(server)
    again = hub_publish(server, build_dir, "--version", "1", "--json")
    assert again.returncode == 0, again.stderr
    second = json.loads(again.stdout)
    assert not second["committed"] and second["commit"] == report["commit"]
    assert {f["action"] for f in second["files"]} == {"unchanged"}
    assert uploads_in_log(server) == before
    assert len(commits_on(server, "v1")) == len(commits_on(server, "main")) + 1


def test_changed_variant_replaces_files_in_one_new_commit(kernelhub_serve, build_dir):
    server = kernelhub_serve()
    assert hub_publish(server, build_dir, "--version", "1", "--create").returncode == 0
    first = commits_on(server, "v1")
    variant = cpu_variant(build_dir)
    (variant / "layers.py").unlink()
    (variant / "extra.py").write_text("EXTRA = 1\n")
    meta = json.loads((variant / "metadata.json").read_text())
    del meta["digest"]  # computed by hub-publish when absent
    (variant / "metadata.json").write_text(json.dumps(meta))
    r = hub_publish(server, build_dir, "--version", "1", "--json")
    assert r.returncode == 0, r.stderr
    actions = {f["path"]: f["action"] for f in json.loads(r.stdout)["files"]}
    assert actions[f"build/{variant.name}/layers.py"] == "delete"
    assert actions[f"build/{variant.name}/extra.py"] == "add"
    assert "extra.py" in json.loads((variant / "metadata.json").read_text())["digest"]["files"]
    assert len(commits_on(server, "v1")) == len(first) + 1
    api = HfApi(endpoint=server.url, token=server.write_token)
    files = api.list_repo_files(REPO, repo_type="kernel", revision="v1")
    assert f"build/{variant.name}/extra.py" in files and f"build/{variant.name}/layers.py" not in files


def test_cut_upload_then_rerun_makes_exactly_one_commit(kernelhub_serve, build_dir, tmp_path):
    # Small files are LFS too, so some objects are stored before the first big one is cut.
    server = kernelhub_serve("--lfs-threshold", "1000", "--fault-cut-upload-after", str(1 << 20))
    cut = hub_publish(server, build_dir, "--version", "1", "--create", "--retries", "0")
    assert cut.returncode == 5  # the Hub could not be reached (docs/CLI.md)
    assert "run the command again" in cut.stderr
    api = HfApi(endpoint=server.url, token=server.write_token)
    assert "v1" not in [b.name for b in api.list_repo_refs(REPO, repo_type="kernel").branches]

    r = hub_publish(server, build_dir, "--version", "1", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["lfs"]["objects_present"] >= 1  # stored by the cut run, not sent again
    assert report["lfs"]["objects_sent"] >= 1
    assert commits_on(server, "v1")[0] == report["commit"]
    assert len(commits_on(server, "v1")) == len(commits_on(server, "main")) + 1
    snapshot = Path(snapshot_download(REPO, repo_type="kernel", revision="v1", endpoint=server.url,
                                      cache_dir=tmp_path / "hf-cache", token=server.write_token))
    remote = {p.relative_to(snapshot).as_posix(): p.read_bytes() for p in snapshot.rglob("*") if p.is_file()}
    assert {k: v for k, v in remote.items() if k.startswith("build/")} == local_files(build_dir)


def test_bad_build_dir_lists_every_problem_and_sends_nothing(kernelhub_serve, build_dir, tmp_path):
    server = kernelhub_serve()
    variant = cpu_variant(build_dir)
    (variant / "metadata.json").unlink()                                   # missing metadata
    (build_dir / "not-a-variant").mkdir()                                  # unparsable name
    outside = tmp_path / "secret.txt"
    outside.write_text("not part of the kernel")
    others = [p for p in build_dir.iterdir() if p.is_dir() and p != variant and p.name != "not-a-variant"]
    for other in others:
        os.symlink(outside, other / "leak.txt")                            # symlink out of the build dir
    before = server.log()
    r = hub_publish(server, build_dir, "--version", "1", "--create")
    assert r.returncode == 2
    assert "nothing was published" in r.stderr
    assert f"{variant.name}: metadata.json is missing" in r.stderr
    assert "not-a-variant: not a build variant name" in r.stderr
    for other in others:
        assert f"{other.name}: leak.txt is a symlink leading out of the build dir" in r.stderr
    as_json = hub_publish(server, build_dir, "--version", "1", "--create", "--json")
    assert as_json.returncode == 2
    error = json.loads(as_json.stdout)["error"]
    assert error["code"] == "invalid_argument" and "missing" not in error
    assert f"{variant.name}: metadata.json is missing" in error["message"]
    assert server.log() == before  # not one request


def test_a_half_built_variant_is_refused_and_variant_publishes_the_others(kernelhub_serve, build_dir):
    # An empty variant folder is what a CMake build left when it built only some variants: refused,
    # with the way out named; --variant publishes the complete one alone.
    server = kernelhub_serve()
    variant = cpu_variant(build_dir)
    half = build_dir / "torch215-cxx11-cu130-x86_64-linux"
    shutil.rmtree(half, ignore_errors=True)
    half.mkdir()
    r = hub_publish(server, build_dir, "--version", "1", "--create")
    assert r.returncode == 2
    assert f"{half.name}: metadata.json is missing: a half-built or broken variant" in r.stderr
    assert "--variant NAME" in r.stderr

    unknown = hub_publish(server, build_dir, "--version", "1", "--create", "--variant", "torch215-cxx11-cu999-x")
    assert unknown.returncode == 2
    assert "--variant torch215-cxx11-cu999-x: no such folder" in unknown.stderr
    assert variant.name in unknown.stderr and half.name in unknown.stderr  # what it holds

    ok = hub_publish(server, build_dir, "--version", "1", "--create", "--variant", variant.name, "--json")
    assert ok.returncode == 0, ok.stderr
    sent = json.loads(ok.stdout)["files"]
    assert sent and all(f["path"].startswith(f"build/{variant.name}/") for f in sent), sent
    got = snapshot_download(REPO, repo_type="kernel", revision="v1", endpoint=server.url, token=server.read_token,
                            cache_dir=str(build_dir.parent / "snapshot"))
    assert sorted(p.name for p in (Path(got) / "build").iterdir()) == [variant.name]


def test_cmake_builds_only_complete_variant_folders():
    # kernels/cmake/write_variant.py assembles each variant beside the build folder and renames it
    # in: whatever subset was built, every folder there is a whole variant, and nothing is left over.
    built = BUILD / "kernels" / "build"
    if not built.is_dir():
        pytest.skip(f"{built} is not built (the reference kernels)")
    for variant in built.iterdir():
        meta = json.loads((variant / "metadata.json").read_text())
        listed = set(meta["digest"]["files"])
        on_disk = {p.relative_to(variant).as_posix() for p in variant.rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts and p.name != "metadata.json"}
        assert listed == on_disk, variant.name
        # kernel-builder's library names: <id>.abi3.so for torch, <id>.so for tvm-ffi builds.
        assert f"{meta['id']}{'.so' if variant.name.startswith('tvm-ffi') else '.abi3.so'}" in listed
    assert not list((BUILD / "kernels" / "staging").glob("*")), "a variant's assembly was left behind"


def test_an_interrupted_assembly_keeps_the_previous_variant(tmp_path):
    # write_variant.py fails (here: the library is missing) after the previous build was complete:
    # the previous variant is still there, whole, and no half-assembled folder is left anywhere.
    built = BUILD / "kernels" / "build"
    if not built.is_dir():
        pytest.skip(f"{built} is not built (the reference kernels)")
    (source,) = [p for p in built.iterdir() if p.name.startswith("torch") and "-cpu-" in p.name]
    target = tmp_path / "build" / source.name
    shutil.copytree(source, target)
    before = {p.name: p.read_bytes() for p in target.iterdir() if p.is_file()}
    meta = json.loads((target / "metadata.json").read_text())
    kernels = ROOT / "kernels"
    args = [sys.executable, str(kernels / "cmake" / "write_variant.py"), "--dir", str(target),
            "--staging-dir", str(tmp_path / "staging"), "--package-dir", str(kernels / "torch-ext" / "reference_kernels"),
            "--build-toml", str(kernels / "build.toml"), "--id", meta["id"], "--backend", "cpu"]
    missing = subprocess.run([*args, "--library", str(tmp_path / "lib" / f"{meta['id']}.abi3.so")],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode != 0 and "No such file" in missing.stderr
    assert {p.name: p.read_bytes() for p in target.iterdir() if p.is_file()} == before
    assert not list((tmp_path / "staging").iterdir())

    rebuilt = subprocess.run([*args, "--library", str(source / f"{meta['id']}.abi3.so")], capture_output=True,
                             text=True, timeout=120)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert sorted(p.name for p in target.iterdir()) == sorted(before)
    assert not list((tmp_path / "staging").iterdir())


def test_inconsistent_metadata_is_refused(kernelhub_serve, build_dir):
    server = kernelhub_serve()
    variant = cpu_variant(build_dir)
    meta = json.loads((variant / "metadata.json").read_text())
    meta["id"] = "_someone_else_cpu_0000000"
    (variant / "metadata.json").write_text(json.dumps(meta))
    (variant / "_ops.py").write_text("# edited after the build\n")
    r = hub_publish(server, build_dir, "--version", "1", "--create")
    assert r.returncode == 2
    assert "`id` is `_someone_else_cpu_0000000`" in r.stderr
    assert "_ops.py" in r.stderr  # the digest no longer matches
    wrong_version = hub_publish(server, build_dir, "--version", "3")
    assert "says version 1 but --version is 3" in wrong_version.stderr
    assert "PUT " not in server.log() and "/commit/" not in server.log()


def test_refused_files_and_bad_tokens_leave_no_commit(kernelhub_serve, build_dir):
    server = kernelhub_serve("--lfs-threshold", "1000", "--max-lfs-object", str(1 << 20))
    r = hub_publish(server, build_dir, "--version", "1", "--create")
    assert r.returncode == 2
    assert "the Hub refused these files" in r.stderr and ".abi3.so" in r.stderr
    api = HfApi(endpoint=server.url, token=server.write_token)
    assert "v1" not in [b.name for b in api.list_repo_refs(REPO, repo_type="kernel").branches]

    wrong = hub_publish(server, build_dir, "--version", "1", "--json", token="hf_not_a_real_token")
    assert wrong.returncode == 7
    assert "refused the token" in wrong.stderr and "HF_TOKEN" in wrong.stderr
    assert json.loads(wrong.stdout)["error"]["code"] == "unauthorized"
    read_only = hub_publish(server, build_dir, "--version", "1", token=server.read_token)
    assert read_only.returncode == 7
    assert "may not write" in read_only.stderr or "does not exist" in read_only.stderr


def test_missing_repo_without_create_names_the_repo_in_json(kernelhub_serve, build_dir):
    server = kernelhub_serve()
    r = hub_publish(server, build_dir, "--version", "1", "--json")
    assert r.returncode == 3
    error = json.loads(r.stdout)["error"]
    assert (error["code"], error["missing"]) == ("not_found", "repo"), error
    assert REPO in error["message"] and error["message"] in r.stderr


def test_dry_run_sends_nothing(kernelhub_serve, build_dir):
    server = kernelhub_serve()
    before = server.log()
    r = hub_publish(server, build_dir, "--version", "1", "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    assert plan["dry_run"] and len(plan["files"]) == len(local_files(build_dir))
    assert server.log() == before


def test_a_dirty_build_is_reported_before_publishing(kernelhub_serve, build_dir):
    # metadata.json provenance: the `kernels` package warns on every load of a dirty build.
    server = kernelhub_serve()
    variant = cpu_variant(build_dir)
    meta = json.loads((variant / "metadata.json").read_text())
    for dirty in (False, True):
        meta["provenance"]["kernel"] = {"commit": "d45addadb0c380f3d7cc2813310b3bcd75f8aa9a", "dirty": dirty}
        meta["provenance"]["kernel-builder"] = {"version": "0.17.0"}
        (variant / "metadata.json").write_text(json.dumps(meta))
        r = hub_publish(server, build_dir, "--version", "1", "--dry-run", "--json")
        assert r.returncode == 0, r.stderr
        assert {v["name"]: v["dirty_build"] for v in json.loads(r.stdout)["variants"]}[variant.name] is dirty
    text = hub_publish(server, build_dir, "--version", "1", "--dry-run")
    (line,) = [line for line in text.stdout.splitlines() if variant.name in line]
    assert "built from a dirty tree" in line


def test_signed_publish_verifies_after_download_and_stays_idempotent(kernelhub_serve, build_dir, tmp_path):
    server = kernelhub_serve()
    key = tmp_path / "publish.key"
    made = subprocess.run([str(KERNELHUB), "keygen", "--out", str(key)], capture_output=True, text=True, timeout=60)
    if made.returncode != 0 and "unknown command" in made.stderr:
        pytest.skip("this build has no `kernelhub keygen` (signing/)")
    assert made.returncode == 0, made.stderr
    before = local_files(build_dir) | {p.name: b"" for p in build_dir.iterdir()}
    r = hub_publish(server, build_dir, "--version", "1", "--create", "--sign-key", str(key), "--json")
    assert r.returncode == 0, r.stderr
    first = json.loads(r.stdout)
    # A Sigstore bundle in each variant folder, the name kernels' digest check leaves out
    # (docs/SIGNING.md); staged outside the build folder, never written into it.
    variants = [p for p in build_dir.iterdir() if p.is_dir()]
    signatures = [f["path"] for f in first["files"] if f["path"].endswith(".sigstore")]
    assert sorted(signatures) == sorted(f"build/{p.name}/metadata.json.sigstore" for p in variants)
    assert not list(build_dir.rglob("*.sigstore")) and not list(build_dir.rglob("*.kernelhub.sig"))

    # Publishing wrote nothing into the build directory: no signature there for a later unsigned
    # publish to trip on (or to publish, stale, elsewhere).
    assert local_files(build_dir) | {p.name: b"" for p in build_dir.iterdir()} == before
    env = dict(os.environ, HF_ENDPOINT=server.url, HF_TOKEN=server.write_token, HF_HOME=str(tmp_path / "hf-home"))
    unsigned = subprocess.run([str(HUB_PUBLISH), "acme/unsigned-kernels", "--build-dir", str(build_dir), "--version",
                               "1", "--create", "--json"], capture_output=True, text=True, env=env, timeout=600)
    assert unsigned.returncode == 0, unsigned.stderr
    assert not [f for f in json.loads(unsigned.stdout)["files"] if f["path"].endswith((".kernelhub.sig", ".sigstore"))]

    # Re-signing identical content keeps the signature the branch has, so no new commit.
    again = hub_publish(server, build_dir, "--version", "1", "--sign-key", str(key), "--json")
    assert again.returncode == 0, again.stderr
    assert not json.loads(again.stdout)["committed"]

    # What the Hub serves verifies with the publisher's key, as get_kernel checks it.
    snapshot = Path(snapshot_download(REPO, repo_type="kernel", revision="v1", endpoint=server.url,
                                      cache_dir=tmp_path / "hf-cache", token=server.write_token))
    public = (tmp_path / "publish.key.pub").read_text().strip()
    variant = snapshot / "build" / cpu_variant(build_dir).name
    ok = subprocess.run([str(KERNELHUB), "verify", str(variant), "--repo", REPO, "--version", "1", "--key", public,
                         "--require"], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    env = server.client_env(tmp_path / "cache")
    env["KERNELHUB_TRUSTED_KEYS"] = f"acme={public}"
    got = subprocess.run([str(KERNELHUB), "get", REPO, "--version", "1", "--json"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert got.returncode == 0, got.stderr
