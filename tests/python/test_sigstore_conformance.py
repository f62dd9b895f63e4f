"""The Sigstore client conformance suite's `bundle-verify` cases (vendored: shared/vendor's
sigstore-conformance tarball, found by walking up from the repository root) run through
`kernelhub sigstore verify-bundle`, speaking the suite's CLI protocol (docs/cli_protocol.md in the
tarball) as its own runner does: every case with the artifact as a file and as a `sha256:` digest,
and the exit status must be 0 exactly when the case's name does not end in `_fail`.

A case folder holds bundle.sigstore.json and may hold `artifact` (else ../a.txt), `identity`,
`issuer` (else the suite's defaults), `key.pub` (verify with that key instead of an identity) and
`trusted_root.json` (else the public-good production root, which kernelhub embeds)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
KERNELHUB = BUILD / "bin" / "kernelhub"
CASES_IN_TARBALL = "test/assets/bundle-verify/"
DEFAULT_IDENTITY = ("https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/"
                    ".github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main")
DEFAULT_ISSUER = "https://token.actions.githubusercontent.com"


def find_vendor() -> Path | None:
    """shared/vendor in the repository root or a folder above it (a worktree, a CI clone)."""
    for folder in [ROOT, *ROOT.parents]:
        if (folder / "shared" / "vendor").is_dir():
            return folder / "shared" / "vendor"
    return None


VENDOR = find_vendor()
TARBALL = next(iter(sorted(VENDOR.glob("sigstore-conformance-*.tar.gz"))), None) if VENDOR else None


def case_names() -> list[str]:
    if TARBALL is None:
        return []
    with tarfile.open(TARBALL) as tar:
        names = {m.name[len(CASES_IN_TARBALL):].split("/")[0] for m in tar.getmembers()
                 if m.name.startswith(CASES_IN_TARBALL) and m.name.endswith("/bundle.sigstore.json")}
    return sorted(names)


CASES = case_names()

pytestmark = [
    pytest.mark.skipif(TARBALL is None, reason=(
        "NO SIGSTORE CONFORMANCE RUN: shared/vendor/sigstore-conformance-*.tar.gz was not found in the repository "
        "root or any folder above it (a checkout needs shared/ beside it, as CI has)")),
    pytest.mark.skipif(not KERNELHUB.exists(), reason=f"{KERNELHUB} is not built"),
]


@pytest.fixture(scope="module")
def assets(tmp_path_factory) -> Path:
    unpacked = tmp_path_factory.mktemp("sigstore-conformance")
    with tarfile.open(TARBALL) as tar:
        tar.extractall(unpacked, filter="data")
    return unpacked / CASES_IN_TARBALL


def protocol_arguments(case: Path, artifact_form: str) -> list[str]:
    """The arguments, in the protocol's order: --bundle, identity or key, --trusted-root, FILE_OR_DIGEST."""
    args = ["sigstore", "verify-bundle", "--bundle", str(case / "bundle.sigstore.json")]
    if (case / "key.pub").exists():
        args += ["--key", str(case / "key.pub")]
    else:
        identity = (case / "identity").read_text().strip() if (case / "identity").exists() else DEFAULT_IDENTITY
        issuer = (case / "issuer").read_text().strip() if (case / "issuer").exists() else DEFAULT_ISSUER
        args += ["--certificate-identity", identity, "--certificate-oidc-issuer", issuer]
    if (case / "trusted_root.json").exists():
        args += ["--trusted-root", str(case / "trusted_root.json")]
    artifact = case / "artifact" if (case / "artifact").exists() else case.parent / "a.txt"
    if artifact_form == "digest":
        args.append("sha256:" + hashlib.sha256(artifact.read_bytes()).hexdigest())
    else:
        args.append(str(artifact))
    return args


# Why each `_fail` case must be refused: a refusal for another reason would pass the suite and still
# be a bug (a check that never ran). Words of kernelhub's message for the case.
REFUSED_BECAUSE = {
    "bundle-empty-certificate-chain_fail": "is empty: the bundle names no signing certificate",
    "bundle-from-wrong-instance_fail": "a bundle of another Sigstore instance?",
    "bundle-negative-log-index_fail": "a log index is never negative",
    "bundle-unknown-version_fail": "not a bundle version this library reads",
    "bundle-with-root-cert_fail": "the bundle's certificate chain carries a root certificate",
    "dsse-invalid-sig_fail": "the DSSE envelope's signature does not verify",
    "dsse-mismatch-envelope_fail": "the transparency log entry records the DSSE payload's digest",
    "dsse-mismatch-sig_fail": "the transparency log entry records another signature",
    "inclusion-proof-corrupted-hash_fail": "the inclusion proof leads to the root hash",
    "intoto-expired-certificate_fail": "is valid from 2030-01-01T00:00:00Z to 2030-01-01T00:10:00Z, not at",
    "intoto-log-entry-mismatch_fail": "the transparency log entry records another signature",
    "intoto-missing-inclusion-proof_fail": "has no `inclusionProof` with a `checkpoint`",
    "intoto-set-outside-signing-cert-validity_fail": "to 2023-02-01T00:10:00Z, not at 2023-02-02T00:00:00Z",
    "intoto-tsa-timestamp-outside-cert-validity_fail": "to 2023-02-01T00:10:00Z, not at 2023-02-02T00:00:00Z",
    "invalid-checkpoint-signature_fail": "the checkpoint signature of `rekor.sigstore.dev` does not verify",
    "invalid-ct-key_fail": "no SCT of the signing certificate verifies",
    "managed-key-no-key_fail": "signed with a managed key",
    "managed-key-wrong-key_fail": "not a PEM public key",
    "rekor2-checkpoint-missing-log-signature_fail": "the checkpoint does not end its signature lines",
    "rekor2-checkpoint-missing-origin_fail": "the checkpoint note has fewer than three lines",
    "rekor2-checkpoint-missing-root-hash_fail": "the checkpoint note has fewer than three lines",
    "rekor2-checkpoint-missing-size_fail": "the checkpoint note has fewer than three lines",
    "rekor2-dsse-mismatch-envelope_fail": "the transparency log entry records the DSSE envelope's PAE digest",
    "rekor2-dsse-mismatch-sig_fail": "the transparency log entry records another signature",
    "rekor2-no-inclusion-proof_fail": "has no `inclusionProof` with a `checkpoint`",
    "rekor2-no-timestamp_fail": "nothing would say when it was signed",
    "rekor2-timestamp-payload-mismatch_fail": "message imprint mismatch",
    "rekor2-timestamp-untrusted-tsa-with-embedded-cert_fail": "not signed by a certificate the root lists for it",
    "rekor2-timestamp-untrusted-tsa-without-embedded-cert_fail": "not signed by a certificate the root lists for it",
    "rekor2-timestamp-with-incorrect-time_fail": "to 2025-06-12T12:12:16Z, not at 2025-07-15T10:33:31Z",
    "trust-root-tlog-missing-validity-start_fail": "validFor.start` is missing",
    "wrong-hashedrekord-artifact_fail": "the transparency log entry records the artifact's digest",
    "wrong-hashedrekord-entry_fail": "the transparency log entry records the artifact's digest",
    "wrong-material_fail": "the artifact given has",
}


def test_the_vendored_suite_has_its_cases():
    """The tarball's README promises 50 cases; a run over fewer would pass vacuously."""
    assert len(CASES) == 50, CASES
    assert sorted(REFUSED_BECAUSE) == [name for name in CASES if name.endswith("_fail")]


@pytest.mark.parametrize("artifact_form", ["file", "digest"])
@pytest.mark.parametrize("name", CASES)
def test_bundle_verify_case(assets, name, artifact_form):
    case = assets / name
    must_verify = not name.endswith("_fail")
    result = subprocess.run([str(KERNELHUB), *protocol_arguments(case, artifact_form)], capture_output=True,
                            text=True, timeout=60)
    assert (result.returncode == 0) == must_verify, (
        f"{name} ({artifact_form}): exit {result.returncode}, the case says it must "
        f"{'verify' if must_verify else 'be refused'}\nstdout: {result.stdout}\nstderr: {result.stderr}")
    if must_verify:
        assert result.stdout.startswith("verified: "), result.stdout
    else:
        # One line saying why, and a status of the kind (8 refused, 9 malformed, 2 a --key that is not a
        # key), never a crash.
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("kernelhub sigstore verify-bundle: error: "), result.stderr
        assert result.returncode in (2, 8, 9), result.returncode
        assert REFUSED_BECAUSE[name] in lines[0], lines[0]


def test_the_kernels_policy_refuses_the_suites_signer_naming_the_field(assets):
    """--policy kernels is kernels 0.19.1's DEFAULT_POLICY: a genuine bundle from another repository is refused
    as an untrusted publisher (exit 8), not as a bad signature."""
    case = assets / "happy-path-v0.3"
    result = subprocess.run([str(KERNELHUB), "sigstore", "verify-bundle", "--bundle", str(case / "bundle.sigstore.json"),
                             "--policy", "kernels", "--json", str(assets / "a.txt")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 8, result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "untrusted_publisher"
    assert ("source repository URI (1.3.6.1.4.1.57264.1.12) is "
            "`https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon`") in error["message"]


def test_json_names_the_signer_the_times_and_the_log_entry(assets):
    case = assets / "rekor2-timestamp-with-embedded-cert"
    result = subprocess.run([str(KERNELHUB), *protocol_arguments(case, "file")[:-1], "--json", str(assets / "a.txt")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["verified"] is True and out["bundle_version"] == "0.3"
    assert out["signer"]["kind"] == "certificate"
    assert out["signer"]["subject_alternative_names"] == [DEFAULT_IDENTITY]
    assert out["signer"]["issuer"] == DEFAULT_ISSUER
    assert [t["source"] for t in out["times"]] == ["timestamp_authority"]
    assert out["times"][0]["authority"] == "https://timestamp.sigstage.dev/api/v1/timestamp"
    assert out["log_entry"]["log"] == "https://log2025-alpha1.rekor.sigstage.dev"
    assert out["log_entry"]["kind"] == "hashedrekord 0.0.2"


@pytest.mark.skipif(VENDOR is None or not any(VENDOR.glob("sigstore-python-*-trust-roots.tar.gz")),
                    reason="the vendored sigstore-python trust roots are not here")
def test_the_embedded_roots_are_sigstore_pythons_byte_for_byte(tmp_path):
    """sigstore/data/README.md says where the embedded roots come from; this holds it to that."""
    (tarball,) = VENDOR.glob("sigstore-python-*-trust-roots.tar.gz")
    with tarfile.open(tarball) as tar:
        tar.extractall(tmp_path, filter="data")
    data = ROOT / "sigstore" / "data"
    assert (data / "public-good-trusted-root.json").read_bytes() == (tmp_path / "production-trusted_root.json").read_bytes()
    assert (data / "staging-trusted-root.json").read_bytes() == (tmp_path / "staging-trusted_root.json").read_bytes()
