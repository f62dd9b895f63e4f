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


def test_the_vendored_suite_has_its_cases():
    """The tarball's README promises 50 cases; a run over fewer would pass vacuously."""
    assert len(CASES) == 50, CASES


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
