"""`kernelhub sigstore trusted-root` and the usage rules of `kernelhub sigstore verify-bundle`
(test_sigstore_conformance.py runs real bundles through it)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
KERNELHUB = BUILD / "bin" / "kernelhub"

pytestmark = pytest.mark.skipif(not KERNELHUB.exists(), reason=f"{KERNELHUB} is not built")


def kernelhub(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "KERNELHUB_SIGSTORE_TRUSTED_ROOT"}
    return subprocess.run([str(KERNELHUB), *args], capture_output=True, text=True, timeout=60,
                          env={**environment, **(env or {})})


def test_trusted_root_prints_the_embedded_public_good_root():
    result = kernelhub("sigstore", "trusted-root")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("trusted root: the embedded public-good trusted root")
    for line in ("https://fulcio.sigstore.dev (sigstore.dev/sigstore)", "https://rekor.sigstore.dev",
                 "https://log2025-1.rekor.sigstore.dev", "https://ctfe.sigstore.dev/2022",
                 "https://timestamp.sigstore.dev/api/v1/timestamp"):
        assert line in result.stdout
    out = json.loads(kernelhub("sigstore", "trusted-root", "--json").stdout)
    assert [log["base_url"] for log in out["transparency_logs"]] == ["https://rekor.sigstore.dev",
                                                                    "https://log2025-1.rekor.sigstore.dev"]
    assert out["certificate_authorities"][0]["valid_for"] == {"start": "2021-03-07T03:20:29Z",
                                                             "end": "2022-12-31T23:59:59.999Z"}
    assert out["certificate_authorities"][1]["valid_for"]["end"] is None
    staging = json.loads(kernelhub("sigstore", "trusted-root", "--staging", "--json").stdout)
    assert len(staging["transparency_logs"]) == 4 and "staging" in staging["source"]


def test_the_variable_names_a_root_file_that_replaces_the_embedded_one(tmp_path):
    staging_file = tmp_path / "trusted_root.json"
    embedded = ROOT / "sigstore" / "data" / "staging-trusted-root.json"
    staging_file.write_text(embedded.read_text())
    result = kernelhub("sigstore", "trusted-root", "--json",
                       env={"KERNELHUB_SIGSTORE_TRUSTED_ROOT": str(staging_file)})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["source"] == f"trusted root `{staging_file}`"
    staging_file.write_text('{"mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1", "tlogs": 3}')
    broken = kernelhub("sigstore", "trusted-root", env={"KERNELHUB_SIGSTORE_TRUSTED_ROOT": str(staging_file)})
    assert broken.returncode == 9
    assert "KERNELHUB_SIGSTORE_TRUSTED_ROOT names" in broken.stderr and "`trusted root.tlogs` must be an array" in broken.stderr


@pytest.mark.parametrize("args, why", [
    (["--certificate-identity", "x"], "--certificate-identity and --certificate-oidc-issuer go together"),
    ([], "give one of"),
    (["--policy", "kernels", "--key", "k.pub"], "give one of"),
    (["--policy", "strict"], "--policy takes `kernels`"),
    (["--policy", "kernels", "--allow-no-tlog"], "--allow-no-tlog applies to --key only"),
])
def test_verify_bundle_usage_errors(tmp_path, args, why):
    result = kernelhub("sigstore", "verify-bundle", "--bundle", str(tmp_path / "b.json"), *args, str(tmp_path / "a"))
    assert result.returncode == 2
    assert why in result.stderr


def test_verify_bundle_refuses_malformed_bundles_as_corrupt(tmp_path):
    artifact = tmp_path / "artifact"
    artifact.write_text("hello")
    for text, why in [("{", "bundle is not valid JSON"), ("[" * 100000, "nested more than 32 levels deep"),
                      ('{"mediaType": "application/vnd.dev.sigstore.bundle+json;version=0.4"}',
                       "not a bundle version this library reads")]:
        bundle = tmp_path / "bundle.json"
        bundle.write_text(text)
        result = kernelhub("sigstore", "verify-bundle", "--bundle", str(bundle), "--policy", "kernels", str(artifact))
        assert result.returncode == 9, result.stderr
        assert why in result.stderr


SEEDS = ROOT / "fuzz" / "corpus"
KERNELS_COMMUNITY_BUILD = ("https://github.com/huggingface/kernels-community/.github/workflows/build.yaml"
                           "@refs/heads/main")


@pytest.mark.parametrize("bundle", ["rekor-v1-message", "rekor-v1-dsse", "rekor-v2-timestamp", "rekor-v2-dsse",
                                    "v0.1-chain"])
def test_the_kernels_policy_accepts_a_kernels_community_signing(tmp_path, bundle):
    """The fuzz seeds are bundles of a test Sigstore instance (tests/sigstore/test_instance.hpp) whose
    certificates say kernels-community's build workflow signed them; under that instance's root they verify
    with --policy kernels, and not under the public-good root."""
    artifact = tmp_path / "metadata.json"
    artifact.write_bytes(b'{"name": "relu"}\n')
    args = ["sigstore", "verify-bundle", "--bundle", str(SEEDS / "sigstore_bundle" / f"{bundle}.json"),
            "--policy", "kernels"]
    root = ["--trusted-root", str(SEEDS / "sigstore_trusted_root" / "test-instance.json")]
    result = kernelhub(*args, *root, "--json", str(artifact))
    assert result.returncode == 0, result.stderr
    signer = json.loads(result.stdout)["signer"]
    assert signer["subject_alternative_names"] == [KERNELS_COMMUNITY_BUILD]
    assert signer["source_repository_uri"] == "https://github.com/huggingface/kernels-community"
    assert signer["build_signer_uri"] == KERNELS_COMMUNITY_BUILD
    public_good = kernelhub(*args, str(artifact))
    assert public_good.returncode == 8 and "a bundle of another Sigstore instance?" in public_good.stderr


def test_a_managed_key_bundle_without_a_log_entry_needs_the_key_and_the_flag(tmp_path):
    artifact = tmp_path / "artifact"
    artifact.write_bytes(b"artifact")
    bundle = str(SEEDS / "sigstore_bundle" / "managed-key.json")
    no_key = kernelhub("sigstore", "verify-bundle", "--bundle", bundle, "--policy", "kernels", str(artifact))
    assert no_key.returncode == 8 and "signed with a managed key" in no_key.stderr
