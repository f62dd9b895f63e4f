"""Conformance of `kernelhub serve` with clients we did not write.

The real `huggingface_hub` (HF_HUB_DISABLE_XET=1, so uploads take the git-lfs batch path) and the
real `kernels` package talk to our C++ server over loopback: repo creation, uploads (regular,
LFS basic and multipart), branches and tags, paginated trees, paths-info, downloads through the
storage-host redirect, snapshots, a download resumed after the server cut the connection, the
Hub's error classes, and finally `kernels.get_kernel(repo, version=1)` loading a CPU variant we
published there and calling its op.
"""

from __future__ import annotations

import glob
import hashlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

huggingface_hub = pytest.importorskip("huggingface_hub")
from huggingface_hub import HfApi, constants, hf_hub_download, snapshot_download  # noqa: E402
from huggingface_hub.errors import (  # noqa: E402
    EntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

# Environment variables are read when huggingface_hub is imported; another test module may have
# imported it first, so pin the one that matters here.
constants.HF_HUB_DISABLE_XET = True

from conftest import BUILD_DIR  # noqa: E402
from kernels_releases import RELEASES, kernels_env  # noqa: E402

KERNEL_REPO = "acme/conformance-kernel"
MODEL_REPO = "acme/conformance-model"
BIG_SIZE = 11 * 1024 * 1024  # > 10 MB: LFS by size; > 4 MiB chunks: multipart


@pytest.fixture(scope="module")
def api(hub_server):
    return HfApi(endpoint=hub_server.url, token=hub_server.write_token)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("upload")
    (root / "README.md").write_text("# conformance\n\nA small text file.\n")
    (root / "weights.bin").write_bytes(os.urandom(BIG_SIZE))
    for rel in ["build/torch-cpu/__init__.py", "build/torch-cpu/_ops.py", "build/torch-cuda/__init__.py",
                "docs/a.md", "docs/b.md"]:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {rel}\n")
    return root


@pytest.fixture(scope="module")
def published(api, folder):
    """Both repos created (twice, with exist_ok) and the folder uploaded to each."""
    for repo_type, repo_id in (("kernel", KERNEL_REPO), ("model", MODEL_REPO)):
        url = api.create_repo(repo_id, repo_type=repo_type)
        assert url.endswith(repo_id)
        again = api.create_repo(repo_id, repo_type=repo_type, exist_ok=True)  # the 409 carries `url`
        assert str(again) == str(url)
        info = api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type=repo_type,
                                 commit_message="upload conformance folder")
        assert info.oid and len(info.oid) == 40
    return folder


def files_in(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_create_repo_types_and_exist_ok(api, published, hub_server):
    with pytest.raises(huggingface_hub.errors.HfHubHTTPError) as excinfo:
        api.create_repo(KERNEL_REPO, repo_type="kernel")  # without exist_ok: 409
    assert excinfo.value.response.status_code == 409
    kernel = api.kernel_info(KERNEL_REPO) if hasattr(api, "kernel_info") else api.repo_info(KERNEL_REPO, repo_type="kernel")
    assert kernel.id == KERNEL_REPO
    model = api.model_info(MODEL_REPO)
    assert {s.rfilename for s in model.siblings} >= {"README.md", "weights.bin", ".gitattributes"}


def test_upload_took_the_lfs_multipart_path(published, hub_server):
    log = hub_server.log()
    assert "/preupload/main" in log
    assert ".git/info/lfs/objects/batch" in log
    assert "PUT /lfs-part/" in log and "POST /lfs-complete/" in log  # 11 MB in 4 MiB parts
    assert "/info/lfs/objects/verify" in log


def test_branches_tags_and_refs(api, published):
    api.create_branch(KERNEL_REPO, branch="v1", repo_type="kernel")
    api.create_branch(KERNEL_REPO, branch="v1", repo_type="kernel", exist_ok=True)
    api.create_tag(KERNEL_REPO, tag="v1.0.0", revision="v1", repo_type="kernel", tag_message="first")
    refs = api.list_repo_refs(KERNEL_REPO, repo_type="kernel")
    branches = {b.name: b.target_commit for b in refs.branches}
    assert set(branches) == {"main", "v1"}
    assert branches["v1"] == branches["main"]
    assert [(t.name, t.ref, t.target_commit) for t in refs.tags] == [("v1.0.0", "refs/tags/v1.0.0", branches["v1"])]
    assert refs.converts == []


def test_recursive_tree_across_pages(api, published, hub_server):
    before = hub_server.log().count("/tree/")
    entries = list(api.list_repo_tree(KERNEL_REPO, repo_type="kernel", recursive=True))
    pages = hub_server.log().count("/tree/") - before
    assert pages >= 5  # page size 2
    paths = {e.path for e in entries}
    assert paths >= set(files_in(published)) | {"build", "build/torch-cpu", "build/torch-cuda", "docs", ".gitattributes"}
    big = next(e for e in entries if e.path == "weights.bin")
    assert big.size == BIG_SIZE
    assert big.lfs.sha256 == hashlib.sha256((published / "weights.bin").read_bytes()).hexdigest()
    variants = [e.path for e in api.list_repo_tree(KERNEL_REPO, path_in_repo="build", repo_type="kernel")]
    assert variants == ["build/torch-cpu", "build/torch-cuda"]


def test_paths_info(api, published):
    infos = api.get_paths_info(KERNEL_REPO, ["README.md", "weights.bin", "build", "nope.txt"], repo_type="kernel")
    by_path = {i.path: i for i in infos}
    assert set(by_path) == {"README.md", "weights.bin", "build"}
    readme = (published / "README.md").read_bytes()
    git_sha1 = hashlib.sha1(b"blob %d\0" % len(readme) + readme).hexdigest()
    assert by_path["README.md"].blob_id == git_sha1
    assert by_path["README.md"].lfs is None
    assert by_path["weights.bin"].lfs.size == BIG_SIZE
    assert type(by_path["build"]).__name__ == "RepoFolder"


@pytest.mark.parametrize("repo_type,repo_id", [("kernel", KERNEL_REPO), ("model", MODEL_REPO)])
def test_hf_hub_download_bytes_identical(published, hub_server, tmp_path, repo_type, repo_id):
    for name in ("README.md", "weights.bin"):
        path = hf_hub_download(repo_id, name, repo_type=repo_type, cache_dir=tmp_path, endpoint=hub_server.url,
                               token=hub_server.write_token)
        assert Path(path).read_bytes() == (published / name).read_bytes()
    # The LFS file came from the storage host, without the Hub token.
    assert "GET /lfs-storage/" in hub_server.log()


def test_snapshot_download(published, hub_server, tmp_path):
    snapshot = Path(snapshot_download(KERNEL_REPO, repo_type="kernel", cache_dir=tmp_path, endpoint=hub_server.url,
                                      token=hub_server.write_token))
    got = files_in(snapshot)
    want = files_in(published)
    assert {k: v for k, v in got.items() if k != ".gitattributes"} == want
    # The snapshot is the huggingface_hub cache layout: symlinks into blobs named by etag.
    assert (snapshot / "weights.bin").is_symlink()
    blob = os.readlink(snapshot / "weights.bin").rsplit("/", 1)[-1]
    assert blob == hashlib.sha256(want["weights.bin"]).hexdigest()


def test_hub_error_classes(api, published, hub_server, tmp_path):
    kwargs = dict(cache_dir=tmp_path, endpoint=hub_server.url, token=hub_server.write_token)
    with pytest.raises(EntryNotFoundError):
        hf_hub_download(KERNEL_REPO, "missing.txt", repo_type="kernel", **kwargs)
    with pytest.raises(RevisionNotFoundError):
        hf_hub_download(KERNEL_REPO, "README.md", repo_type="kernel", revision="v42", **kwargs)
    with pytest.raises(RepositoryNotFoundError):
        hf_hub_download("acme/does-not-exist", "README.md", repo_type="kernel", **kwargs)
    api.create_repo("acme/private-one", repo_type="model", private=True)
    reader = HfApi(endpoint=hub_server.url, token=hub_server.read_token)
    with pytest.raises(RepositoryNotFoundError):
        reader.model_info("acme/private-one")
    assert api.model_info("acme/private-one").private is True
    assert api.whoami()["name"] == "alice"
    assert api.get_organization_overview("acme").trustedKernelPublisher is True
    api.delete_repo("acme/private-one")
    with pytest.raises(RepositoryNotFoundError):
        api.model_info("acme/private-one")


def test_download_resumes_after_the_server_cuts_the_connection(kernelhub_serve, tmp_path):
    # The storage host drops the first download of each object after 12 MiB, past
    # huggingface_hub's first 10 MB write chunk, so the client resumes with a Range request.
    server = kernelhub_serve("--fault-cut-after", str(12 << 20))
    api = HfApi(endpoint=server.url, token=server.write_token)
    api.create_repo("acme/resume", repo_type="model")
    payload = os.urandom(24 << 20)
    api.upload_file(path_or_fileobj=payload, path_in_repo="big.bin", repo_id="acme/resume")
    path = hf_hub_download("acme/resume", "big.bin", cache_dir=tmp_path / "cache", endpoint=server.url,
                           token=server.write_token)
    assert hashlib.sha256(Path(path).read_bytes()).digest() == hashlib.sha256(payload).digest()
    storage_gets = [line for line in server.log().splitlines() if line.startswith("GET /lfs-storage/")]
    assert len(storage_gets) >= 2, storage_gets
    assert "range=bytes=" in storage_gets[-1] and "range=bytes=0-" not in storage_gets[-1], storage_gets


def _cpu_variant_dir() -> Path | None:
    explicit = os.environ.get("KERNELHUB_TEST_VARIANT_DIR")
    if explicit:
        return Path(explicit) if Path(explicit).is_dir() else None
    for build in (BUILD_DIR, Path(__file__).resolve().parents[2] / "build"):
        found = sorted(glob.glob(str(build / "kernels" / "build" / "torch*-cpu-*")))
        if found:
            return Path(found[-1])
    return None


@pytest.mark.parametrize("release", RELEASES)
def test_kernels_package_loads_a_cpu_variant_published_here(kernelhub_serve, tmp_path, release):
    pytest.importorskip("kernels")
    pytest.importorskip("torch")
    variant = _cpu_variant_dir()
    if variant is None:
        pytest.skip("no CPU kernel variant: build the reference kernels (build/kernels/build/torch*-cpu-*) "
                    "or set KERNELHUB_TEST_VARIANT_DIR")
    server = kernelhub_serve()
    api = HfApi(endpoint=server.url, token=server.write_token)
    repo = "acme/reference-kernels"
    api.create_repo(repo, repo_type="kernel")
    api.upload_file(path_or_fileobj=b"# reference kernels\n", path_in_repo="README.md", repo_id=repo, repo_type="kernel")
    api.create_branch(repo, branch="v1", repo_type="kernel")
    api.upload_folder(folder_path=str(variant), path_in_repo=f"build/{variant.name}", repo_id=repo,
                      repo_type="kernel", revision="v1", commit_message=f"publish {variant.name}")

    script = textwrap.dedent(f"""
        import torch, kernels
        kernel = kernels.get_kernel({repo!r}, version=1, backend="cpu")
        x = torch.randn(8, 64)
        w = torch.rand(64) + 0.5
        y = kernel.rms_norm(x, w, 1e-6)
        ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
        torch.testing.assert_close(y, ref, atol=1e-5, rtol=1e-5)
        print("loaded", kernel.__name__, "ok")
    """)
    env = kernels_env(server.client_env(tmp_path / "cache"), release)
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr + server.log()[-3000:]
    assert "ok" in result.stdout
    log = server.log()
    assert "/api/organizations/acme/overview" in log  # publisher trust was checked
    assert "/api/kernels/acme/reference-kernels/refs" in log


def test_serve_stops_soon_after_a_signal_while_a_client_keeps_a_connection_open(kernelhub_serve):
    """SIGTERM stops `kernelhub serve` although a client holds an idle keep-alive connection:
    httplib notices a stop only between requests, so the wait is bounded by the server's keep-alive
    timeout (2 s; it was 10 s, and every test that started a server paid it on teardown)."""
    server = kernelhub_serve()
    url = urlsplit(server.url)
    with socket.create_connection((url.hostname, url.port), timeout=10) as conn:
        conn.sendall(b"GET /api/models/acme/no-such-repo HTTP/1.1\r\nHost: hub\r\nConnection: keep-alive\r\n\r\n")
        answer = conn.recv(65536)
        assert answer.startswith((b"HTTP/1.1 401", b"HTTP/1.1 404")), answer[:200]
        started = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=30)
        stopped_after = time.monotonic() - started
    assert server.process.returncode == 0
    assert "stopping (signal" in server.log()
    assert stopped_after < 6, f"kernelhub serve took {stopped_after:.1f} s to stop with an idle client connected"
