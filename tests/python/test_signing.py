"""Variants signed with a publisher's own key, end to end: `kernelhub keygen`, `kernelhub sign` (a
Sigstore bundle, metadata.json.sigstore), publish to `kernelhub serve`, then `kernelhub get` checks
it with the key from KERNELHUB_TRUSTED_KEYS (docs/SIGNING.md). Each refusal is a typed error with a
clear message; tests/fetch/signature_check_test.cpp covers the verdicts one by one, and
test_sigstore_load.py bundles of a Sigstore instance."""

import glob
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, HfApi, constants

constants.HF_HUB_DISABLE_XET = True  # uploads take the git-LFS path that `kernelhub serve` speaks

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
KERNELHUB = BUILD / "bin" / "kernelhub"


def cpu_variant_dir() -> Path:
    dirs = glob.glob(str(BUILD / "kernels" / "build" / "torch*-cpu-*"))
    assert len(dirs) == 1, dirs
    return Path(dirs[0])


def run(*args, env=None):
    return subprocess.run([str(KERNELHUB), *map(str, args)], capture_output=True, text=True, env=env, timeout=120)


def publish(server, repo_id: str, variant: Path, version: int) -> str:
    api = HfApi(endpoint=server.url, token=server.write_token)
    api.create_repo(repo_id, repo_type="kernel", exist_ok=True)
    api.create_branch(repo_id, repo_type="kernel", branch=f"v{version}", exist_ok=True)
    ops = [CommitOperationAdd(path_in_repo=f"build/{variant.name}/{f.relative_to(variant).as_posix()}",
                              path_or_fileobj=str(f))
           for f in sorted(variant.rglob("*")) if f.is_file() and "__pycache__" not in f.parts]
    return api.create_commit(repo_id, repo_type="kernel", revision=f"v{version}", operations=ops,
                             commit_message="publish").oid


@pytest.fixture(scope="module")
def signed(hub_server, tmp_path_factory):
    """A key pair, the CPU reference variant signed with it and published as acme/signed-kernels v1,
    an unsigned copy as acme/unsigned v1, and a signed copy whose metadata.json changed after it was
    signed as acme/tampered v1. One server and one publish for the module: the tests below only read."""
    if not KERNELHUB.exists():
        pytest.skip(f"{KERNELHUB} is not built")
    tmp_path = tmp_path_factory.mktemp("signing")
    key = tmp_path / "acme"
    r = run("keygen", "--out", key)
    assert r.returncode == 0, r.stderr
    variant = tmp_path / "build" / cpu_variant_dir().name
    shutil.copytree(cpu_variant_dir(), variant, ignore=shutil.ignore_patterns("__pycache__", "*.sigstore"))
    unsigned = tmp_path / "unsigned" / variant.name
    shutil.copytree(variant, unsigned)
    r = run("sign", variant, "--key", key)
    assert r.returncode == 0, r.stderr
    assert (variant / "metadata.json.sigstore").is_file()
    tampered = tmp_path / "tampered" / variant.name
    shutil.copytree(variant, tampered)
    metadata = tampered / "metadata.json"
    metadata.write_text(metadata.read_text() + " ")  # outside the digest, inside the signature
    publish(hub_server, "acme/signed-kernels", variant, 1)
    publish(hub_server, "acme/unsigned", unsigned, 1)
    publish(hub_server, "acme/tampered", tampered, 1)
    return {"server": hub_server, "key": key, "variant": variant,
            "public_key": Path(f"{key}.pub").read_text().strip()}


def get(signed, tmp_path, *args, trusted=None):
    env = dict(os.environ, HF_ENDPOINT=signed["server"].url, HF_HUB_CACHE=str(tmp_path / "cache"), HF_HUB_DISABLE_XET="1",
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_STATE_HOME=str(tmp_path / "state"))
    for name in ("HF_TOKEN", "LOCAL_KERNELS", "KERNELHUB_TRUSTED_KEYS", "KERNELHUB_REQUIRE_SIGNATURE",
                 "KERNELHUB_SIGNERS", "KERNELHUB_SIGSTORE_TRUSTED_ROOT"):
        env.pop(name, None)
    if trusted:
        env["KERNELHUB_TRUSTED_KEYS"] = trusted
    return run("get", *args, env=env)



def signature_warnings(result) -> list[str]:
    """The load's warnings about its signature (a build from a dirty tree warns too, of itself)."""
    return [w for w in json.loads(result.stdout)["warnings"] if "dirty git tree" not in w]

def test_keygen_writes_a_private_key_only_its_owner_reads_and_never_overwrites(tmp_path):
    if not KERNELHUB.exists():
        pytest.skip(f"{KERNELHUB} is not built")
    key = tmp_path / "k"
    r = run("keygen", "--out", key)
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert key.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    assert len(Path(f"{key}.pub").read_text().strip()) == 44
    before = key.read_bytes()
    r = run("keygen", "--out", key)
    assert r.returncode == 1 and "already exists" in r.stderr
    assert key.read_bytes() == before


def test_sign_writes_a_keyed_sigstore_bundle_over_metadata_json(signed):
    bundle = json.loads((signed["variant"] / "metadata.json.sigstore").read_text())
    assert bundle["mediaType"] == "application/vnd.dev.sigstore.bundle.v0.3+json"
    assert "publicKey" in bundle["verificationMaterial"] and "tlogEntries" not in bundle["verificationMaterial"]
    assert "messageSignature" in bundle


def test_signed_variant_verifies_on_disk_and_through_the_hub(signed, tmp_path):
    r = run("verify", signed["variant"], "--repo", "acme/signed-kernels", "--key", f"{signed['key']}.pub")
    assert r.returncode == 0, r.stderr
    assert "signature OK" in r.stdout
    r = get(signed, tmp_path, "acme/signed-kernels", "--version", "1", "--require-signature", "--json",
            trusted=f"acme={signed['public_key']}")
    assert r.returncode == 0, r.stderr
    assert not signature_warnings(r)
    # The signature check and metadata.json's digest read the same files, and this cold load
    # hashed each as it downloaded: nothing is read again (never the op library twice).
    files = [f for f in signed["variant"].rglob("*") if f.is_file()]
    assert json.loads(r.stdout)["bytes_hashed"] == 0
    assert json.loads(r.stdout)["bytes_read"] < sum(f.stat().st_size for f in files) // 4


def test_a_signature_no_key_is_configured_for_is_warned_about_as_kernels_does(signed, tmp_path):
    r = get(signed, tmp_path, "acme/signed-kernels", "--version", "1", "--json")
    assert r.returncode == 0, r.stderr
    (warning,) = signature_warnings(r)
    assert "managed key" in warning and "no key is configured" in warning
    assert "kernelhub get: warning:" in r.stderr
    r = get(signed, tmp_path, "acme/signed-kernels", "--version", "1", "--require-signature")
    assert r.returncode == 8, r.stderr  # not trusted (docs/CLI.md)
    assert "not a signer accepted for it" in r.stderr


def test_a_key_not_trusted_for_the_repo_is_refused(signed, tmp_path):
    other = tmp_path / "other"
    assert run("keygen", "--out", other).returncode == 0
    r = get(signed, tmp_path, "acme/signed-kernels", "--version", "1",
            trusted=f"acme={Path(f'{other}.pub').read_text().strip()}")
    assert r.returncode == 8
    assert "no key configured for it verifies it" in r.stderr


def test_metadata_changed_after_signing_is_refused_where_the_key_is_configured(signed, tmp_path):
    r = get(signed, tmp_path, "acme/tampered", "--version", "1", "--json", trusted=f"acme={signed['public_key']}")
    assert r.returncode == 8, r.stderr
    error = json.loads(r.stdout)["error"]
    assert error["code"] == "bad_signature" and "no key configured for it verifies it" in error["message"]
    # Without the key, a keyed bundle cannot be checked at all: it is a signer not accepted, warned
    # about (as kernels warns), and refused where a signature is required.
    r = get(signed, tmp_path, "acme/tampered", "--version", "1", "--json")
    assert r.returncode == 0 and "managed key" in signature_warnings(r)[0], r.stderr
    r = get(signed, tmp_path, "acme/tampered", "--version", "1", "--require-signature")
    assert r.returncode == 8, r.stderr


def test_unsigned_variants_fail_when_a_key_is_trusted_or_a_signature_required(signed, tmp_path):
    r = get(signed, tmp_path, "acme/unsigned", "--version", "1", trusted=f"acme={signed['public_key']}")
    assert r.returncode == 8
    assert "is not signed" in r.stderr and "signers are configured" in r.stderr
    r = get(signed, tmp_path, "acme/unsigned", "--version", "1", "--require-signature")
    assert r.returncode == 8
    assert "a signature is required" in r.stderr
    r = get(signed, tmp_path, "acme/unsigned", "--version", "1")  # nothing configured: a warning
    assert r.returncode == 0, r.stderr
    assert "is not signed" in r.stderr and "warning" in r.stderr
