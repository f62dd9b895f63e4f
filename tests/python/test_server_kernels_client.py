"""`kernelhub serve` answers everything kernels 0.19.1 asks of the Hub, through its own code: its
`get_kernel` (by version, branch, tag and commit, then offline from what it wrote into the cache),
its `has_kernel`, and its CLI's `kernels info` and `kernels variants` (with their options), each in
a child interpreter against one server; the server's log shows no request it could not answer."""

from __future__ import annotations

import json
import subprocess
import textwrap

import pytest
from huggingface_hub import HfApi
from kernels_releases import CURRENT, kernels_cli, kernels_env
from shim_support import cpu_variant_dir, publish, require_shim, run_json

REPO = "acme/reference-kernels"


@pytest.fixture(scope="module")
def hub(hub_server):
    require_shim()  # the reference kernels' CPU variant
    variant = cpu_variant_dir()
    hub_server.cuda_name = variant.name.replace("-cpu-", "-cu130-")
    hub_server.v1 = publish(hub_server, REPO)
    # kernels chooses CUDA for a CUDA torch; the same files under a CUDA name give it one.
    hub_server.v1 = publish(hub_server, REPO, variant_name=hub_server.cuda_name)
    hub_server.v2 = publish(hub_server, REPO, version=2)
    HfApi(endpoint=hub_server.url, token=hub_server.write_token).create_tag(
        REPO, repo_type="kernel", tag="release-1", revision=hub_server.v1)
    publish(hub_server, "acme/aarch64-only", variant_name=variant.name.replace("x86_64", "aarch64"))
    return hub_server


def unanswered(server, since: int) -> list[str]:
    """Requests since line `since` of the log that the server answered with an error."""
    fields = [line.split() for line in server.log().splitlines()[since:]]
    return [" ".join(f) for f in fields if len(f) > 2 and f[2].isdigit() and int(f[2]) >= 400]


def env_for(server, cache, offline=False) -> dict:
    env = server.client_env(cache)
    env.pop("LOCAL_KERNELS", None)
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return kernels_env(env, CURRENT)


LOAD = textwrap.dedent(r"""
    import json, sys, torch, kernels
    kernel = kernels.get_kernel(sys.argv[1], **json.loads(sys.argv[2]))
    x, w = torch.randn(4, 64), torch.rand(64) + 0.5
    ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    torch.testing.assert_close(kernel.rms_norm(x, w, 1e-6), ref, atol=1e-5, rtol=1e-5)
    (loaded,) = kernels.get_loaded_kernels()
    print(json.dumps({"file": kernel.__file__, "revision": str(loaded.repo_info.revision)}))
""")


def test_get_kernel_by_version_branch_tag_and_commit_then_offline(hub, tmp_path):
    cache = tmp_path / "cache"
    since = len(hub.log().splitlines())
    for kwargs, commit in (({"version": 1}, hub.v1), ({"version": 2}, hub.v2), ({"revision": "v1"}, hub.v1),
                           ({"revision": "release-1"}, hub.v1), ({"revision": hub.v2}, hub.v2)):
        got = run_json(LOAD, env_for(hub, cache), REPO, json.dumps({**kwargs, "backend": "cpu"}))
        assert got["revision"] == commit and f"/snapshots/{commit}/build/" in got["file"], (kwargs, got)
    assert unanswered(hub, since) == []
    # 0.19.1 resolved each ref to a commit and wrote refs/<ref> itself: offline, each loads again.
    refs = cache / "kernels--acme--reference-kernels" / "refs"
    written = {p.name: p.read_text() for p in refs.iterdir()}
    assert written.items() >= {"v1": hub.v1, "v2": hub.v2, "release-1": hub.v1}.items(), written
    before = len(hub.log().splitlines())
    for kwargs in ({"version": 1}, {"revision": "release-1"}, {"revision": hub.v2}):
        run_json(LOAD, env_for(hub, cache, offline=True), REPO, json.dumps({**kwargs, "backend": "cpu"}))
    assert len(hub.log().splitlines()) == before


HAS_KERNEL = textwrap.dedent(r"""
    import json, sys, kernels
    print(json.dumps([kernels.has_kernel(repo, **kwargs) for repo, kwargs in json.loads(sys.argv[1])]))
""")


def test_has_kernel(hub, tmp_path):
    since = len(hub.log().splitlines())
    calls = [(REPO, {"version": 1}), (REPO, {"version": 1, "backend": "cpu"}), (REPO, {"revision": "release-1"}),
             (REPO, {"revision": hub.v2, "backend": "cpu"}), (REPO, {"revision": hub.v2}),
             ("acme/aarch64-only", {"version": 1, "backend": "cpu"})]
    got = run_json(HAS_KERNEL, env_for(hub, tmp_path / "cache"), json.dumps(calls))
    # v2 has only the CPU variant: no build for kernels' own choice (CUDA, for this CUDA torch).
    assert got == [True, True, True, True, False, False]
    assert unanswered(hub, since) == []


def cli(hub, tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*kernels_cli(CURRENT), *args], env=env_for(hub, tmp_path / "cache"), capture_output=True,
                          text=True, timeout=300)


def test_kernels_info(hub, tmp_path):
    since = len(hub.log().splitlines())
    result = cli(hub, tmp_path, "info", REPO, "--json")  # no version: the latest, v2
    assert result.returncode == 1 and "Cannot find a build variant" in result.stderr  # v2: CPU only, torch: CUDA
    info = json.loads(cli(hub, tmp_path, "info", REPO, "--version", "1", "--json").stdout)
    assert info["repo_id"] == REPO and info["revision"] == "v1" and info["variant"] == hub.cuda_name
    assert info["name"] == "reference-kernels" and info["version"] == 1 and info["backends"] == ["cpu", "cuda"]
    assert info["kernel_depends"] == [] and info["python_depends"] == []
    for revision in ("release-1", hub.v1):
        assert json.loads(cli(hub, tmp_path, "info", REPO, "--revision", revision, "--json").stdout)["variant"] == \
            hub.cuda_name
    human = cli(hub, tmp_path, "info", REPO, "--version", "1", "--dep-tree")
    assert human.returncode == 0 and f"Variant: {hub.cuda_name}" in human.stdout, human.stderr
    assert unanswered(hub, since) == []


def test_kernels_variants(hub, tmp_path):
    since = len(hub.log().splitlines())
    latest = json.loads(cli(hub, tmp_path, "variants", REPO, "--json").stdout)
    assert [r["version"] for r in latest["revisions"]] == [2]
    every = json.loads(cli(hub, tmp_path, "variants", REPO, "--all-versions", "--json").stdout)
    assert [r["version"] for r in every["revisions"]] == [1, 2]
    v1 = every["revisions"][0]["variants"]
    assert {v["variant"]: (v["compatible"], v["preferred"]) for v in v1} == {
        hub.cuda_name: (True, True), cpu_variant_dir().name: (False, False)}
    compatible = json.loads(cli(hub, tmp_path, "variants", REPO, "--version", "1", "--only-compatible",
                                "--json").stdout)
    assert [v["variant"] for v in compatible["revisions"][0]["variants"]] == [hub.cuda_name]
    by_tag = json.loads(cli(hub, tmp_path, "variants", REPO, "--revision", "release-1", "--json").stdout)
    assert by_tag["revisions"][0]["revision"] == "release-1" and len(by_tag["revisions"][0]["variants"]) == 2
    human = cli(hub, tmp_path, "variants", REPO, "--version", "latest")
    assert human.returncode == 0 and "Version 2:" in human.stdout and cpu_variant_dir().name in human.stdout
    assert unanswered(hub, since) == []
