"""kernelhub's Sigstore bundle verifier against sigstore-python 4.5.1, the verifier `kernels[sigstore]`
0.19.1 runs, on bundles of a Sigstore instance made by the test (sigstore_testing.py).

The reference kernels' metadata.json is signed the way kernels-community's CI signs it (identities of
kernels' DEFAULT_POLICY), then each case changes one thing: the file, the signature, the certificate's
identity or validity, the SCT, the log entry, the checkpoint, the trusted root. Each case is verified
twice by each side: under kernels' policy (`kernels` 0.19.1's own `verify_signature`; `kernelhub sigstore
verify-bundle --policy kernels`) and under an identity and issuer (sigstore's `Identity` policy;
`--certificate-identity/--certificate-oidc-issuer`, asking for kernels-community's build.yaml on main).
Every verdict is also held to the one the case must get, so the two cannot agree by being wrong alike.

Where sigstore-python is known to accept what a verifier must refuse, the case says so and why
(`sigstore_python`); there our verifier is held to the right verdict and sigstore-python to its own.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Callable

import pytest

from sigstore_oracle import oracle_env, oracle_folder
from sigstore_testing import (
    GITHUB_ISSUER,
    KERNELS_COMMUNITY,
    KERNELS_COMMUNITY_RS,
    Identity,
    LocalSigstore,
    Signing,
    sign_variant,
)

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KERNELHUB_BUILD_DIR", ROOT / "build"))
KERNELHUB = BUILD / "bin" / "kernelhub"
ORACLE = Path(__file__).with_name("sigstore_oracle.py")
WANTED_IDENTITY = KERNELS_COMMUNITY.workflow_uri  # what the identity checks ask for
OTHER_ISSUER = "https://accounts.google.com"
# sigstore-python checks a log's or CA's validFor window against the time of verification, and only
# its start (sigstore/_internal/trust.py, `_get_tlog_keys` and `get_fulcio_certs` with allow_expired),
# never against the time of signing; protobuf-specs' TrustedRoot asks for the time of signing, which
# sigstore-go checks (pkg/tlog `VerifySET`, pkg/root `FulcioCertificateAuthority.Verify`).
WINDOW_AT_VERIFICATION = "sigstore-python checks the validFor window's start against now, never its end"


@dataclass(frozen=True)
class Case:
    """One bundle to verify and the verdicts it must get: under kernels' policy, and under the
    identity `WANTED_IDENTITY` with GitHub's issuer."""

    name: str
    kernels: bool
    identity: bool
    signing: Signing = field(default_factory=Signing)
    edit_bundle: Callable[[dict, dict], None] | None = None  # (bundle, a good bundle of another key)
    edit_metadata: Callable[[bytes], bytes] | None = None
    trusted_root: dict | None = None  # parts of LocalSigstore.trusted_root to replace
    # sigstore-python's verdicts (kernels, identity) where they are known to differ, and why.
    sigstore_python: tuple[bool, bool] | None = None
    why: str = ""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _flip_last_byte(text: str) -> str:
    """The base64 value with its last byte changed: still well formed (a DER signature stays DER)."""
    data = bytearray(base64.b64decode(text))
    data[-1] ^= 0x01
    return _b64(bytes(data))


def _entry(bundle: dict) -> dict:
    return bundle["verificationMaterial"]["tlogEntries"][0]


def _set(path: tuple[str, ...], change: Callable[[str], str]) -> Callable[[dict, dict], None]:
    """An edit of the bundle's first log entry at `path` (keys from the entry down)."""

    def edit(bundle: dict, _other: dict) -> None:
        node = _entry(bundle)
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = change(node[path[-1]])

    return edit


def _other_certificate(bundle: dict, other: dict) -> None:
    bundle["verificationMaterial"]["certificate"] = other["verificationMaterial"]["certificate"]


def _other_digest(bundle: dict, _other: dict) -> None:
    bundle["messageSignature"]["messageDigest"]["digest"] = _b64(hashlib.sha256(b"another file").digest())


def _signature_changed(bundle: dict, _other: dict) -> None:
    bundle["messageSignature"]["signature"] = _flip_last_byte(bundle["messageSignature"]["signature"])


def _body_reserialized(body: str) -> str:
    return _b64(json.dumps(json.loads(base64.b64decode(body)), indent=1).encode())


def _proof_shape(index: int, size: int) -> tuple[int, int]:
    """How many hashes of an RFC 6962 inclusion proof lie below and on the tree's right border."""
    inner = (index ^ (size - 1)).bit_length()
    return inner, bin(index >> inner).count("1")


def _same_path_larger_tree(bundle: dict, _other: dict) -> None:
    """The proof's tree size made larger than the checkpoint's where the path keeps its shape, so the
    proof's hashes still lead to the checkpoint's root."""
    proof = _entry(bundle)["inclusionProof"]
    index, size = int(proof["logIndex"]), int(proof["treeSize"])
    larger = next((s for s in range(size + 1, 4 * size) if _proof_shape(index, s) == _proof_shape(index, size)), None)
    assert larger is not None, f"no larger tree keeps the shape of the path to entry {index} of {size}"
    proof["treeSize"] = str(larger)


def _change_one_byte(data: bytes) -> bytes:
    at = data.index(b'"', len(data) // 2)  # a byte inside the JSON, the file stays JSON-shaped
    return data[:at + 1] + bytes([data[at + 1] ^ 0x01]) + data[at + 2:]


def make_cases(sigstore: LocalSigstore, stranger: LocalSigstore) -> list[Case]:
    """Every case: the good signings first, then one change each. `stranger` is an instance the
    trusted root does not trust (its CA, CT log, transparency log and TSA)."""
    now, day = sigstore.now, timedelta(days=1)
    kc = KERNELS_COMMUNITY
    return [
        Case("kernels-community build.yaml", True, True),
        Case("kernels-community build-mac.yaml", True, False, Signing(replace(kc, workflow="build-mac.yaml"))),
        Case("kernels-community-rs build.yaml", True, False, Signing(KERNELS_COMMUNITY_RS)),
        Case("signed at the certificate's last second", True, True,
             Signing(certificate_starts=timedelta(minutes=-10), certificate_lasts=timedelta(minutes=10))),
        Case("log key valid until the signing second", True, True,
             trusted_root={"tlogs": [replace(sigstore.tlog.key, valid_until=now)]}),
        Case("CA valid until the signing second", True, True,
             trusted_root={"cas": [replace(sigstore.ca, valid_until=now)]}),
        # The signed file and the signature.
        Case("metadata.json: one byte changed", False, False, edit_metadata=_change_one_byte),
        Case("signature: one byte changed", False, False, edit_bundle=_signature_changed),
        Case("signed by a key not the certificate's", False, False, Signing(signed_by_certificate_key=False)),
        Case("message digest of another file", False, False, edit_bundle=_other_digest),
        Case("log entry of another file", False, False, Signing(logged_artifact=b"another file")),
        Case("certificate of another signing", False, False, edit_bundle=_other_certificate),
        # The identity.
        Case("another repository", False, False, Signing(Identity("huggingface/my-kernels"))),
        Case("another workflow", False, False, Signing(replace(kc, workflow="release.yaml"))),
        Case("another branch", False, False, Signing(replace(kc, ref="refs/heads/dev"))),
        Case("another OIDC issuer", False, False, Signing(replace(kc, issuer=OTHER_ISSUER))),
        Case("issuer V2 (.1.8) of another issuer", False, False, Signing(extensions={"1.8": OTHER_ISSUER}),
             sigstore_python=(False, True),
             why="sigstore-python's Identity policy reads only the V1 issuer (.1.1); cosign and sigstore-go "
                 "read V2 (.1.8) first"),
        Case("no V1 issuer (.1.1), the V2 one GitHub's", False, True, Signing(extensions={"1.1": None}),
             sigstore_python=(False, False),
             why="sigstore-python's Identity policy demands the deprecated V1 issuer (.1.1); cosign and "
                 "sigstore-go accept the V2 one (.1.8) alone (kernels' policy asks for both)"),
        Case("kernels-community-rs build-mac.yaml", False, False,
             Signing(replace(KERNELS_COMMUNITY_RS, workflow="build-mac.yaml"))),
        Case("source repository (.1.12) of another repository", False, True,
             Signing(extensions={"1.12": "https://github.com/huggingface/my-kernels"})),
        Case("build signer (.1.9) of another workflow", False, True,
             Signing(extensions={"1.9": replace(kc, workflow="release.yaml").workflow_uri})),
        # The certificate.
        Case("certificate expired before the signing", False, False,
             Signing(certificate_starts=timedelta(minutes=-20), certificate_lasts=timedelta(minutes=10))),
        Case("certificate not yet valid at the signing", False, False,
             Signing(certificate_starts=timedelta(seconds=1))),
        Case("certificate of an untrusted CA", False, False, Signing(ca=stranger.ca)),
        Case("no digitalSignature key usage", False, False, Signing(digital_signature_usage=False)),
        Case("no codeSigning extended key usage", False, False, Signing(code_signing_usage=False)),
        Case("CA validity ended before the signing", False, False,
             trusted_root={"cas": [replace(sigstore.ca, valid_until=now - timedelta(seconds=1))]},
             sigstore_python=(True, True), why=WINDOW_AT_VERIFICATION),
        Case("CA not yet valid", False, False, trusted_root={"cas": [replace(sigstore.ca, valid_from=now + day)]}),
        # The SCT.
        Case("no SCT", False, False, Signing(sct="missing")),
        Case("SCT with a wrong signature", False, False, Signing(sct="wrong-signature")),
        Case("SCT of an untrusted CT log", False, False, Signing(ct_log=stranger.ct_log)),
        Case("CT log key expired before the signing", False, False,
             trusted_root={"ctlogs": [replace(sigstore.ct_log, valid_until=now - timedelta(minutes=5))]},
             sigstore_python=(True, True), why=WINDOW_AT_VERIFICATION),
        Case("CT log key not yet valid", False, False,
             trusted_root={"ctlogs": [replace(sigstore.ct_log, valid_from=now + day)]}),
        # RFC 3161 timestamps: a second source of time, or the only one without a SET.
        Case("a TSA timestamp too", True, True, Signing(timestamp="valid")),
        Case("a TSA timestamp and no SET", True, True, Signing(timestamp="valid", inclusion_promise="missing")),
        Case("no SET, a TSA timestamp of another signature", False, False,
             Signing(timestamp="other-signature", inclusion_promise="missing")),
        Case("no SET, a TSA timestamp of an untrusted TSA", False, False,
             Signing(timestamp="valid", tsa=stranger.tsa, inclusion_promise="missing")),
        Case("TSA timestamp after the certificate expired", False, False,
             Signing(timestamp="valid", timestamped=timedelta(hours=1))),
        Case("no SET, TSA validity ended before the timestamp", False, False,
             Signing(timestamp="valid", inclusion_promise="missing"),
             trusted_root={"tsas": [replace(sigstore.tsa, valid_until=now - timedelta(seconds=1))]}),
        # The transparency log entry.
        Case("no inclusion promise (SET)", False, False, Signing(inclusion_promise="missing")),
        Case("SET with a wrong signature", False, False, Signing(inclusion_promise="wrong-signature")),
        Case("integrated time changed", False, False, edit_bundle=_set(("integratedTime",), lambda t: str(int(t) - 1))),
        Case("log index changed", False, False, edit_bundle=_set(("logIndex",), lambda i: str(int(i) + 1))),
        Case("inclusion proof: a hash changed", False, False,
             edit_bundle=lambda b, _: _entry(b)["inclusionProof"]["hashes"].__setitem__(
                 0, _flip_last_byte(_entry(b)["inclusionProof"]["hashes"][0]))),
        Case("inclusion proof: root hash changed", False, False,
             edit_bundle=_set(("inclusionProof", "rootHash"), _flip_last_byte)),
        Case("inclusion proof: tree size changed", False, False,
             edit_bundle=_set(("inclusionProof", "treeSize"), lambda s: str(int(s) * 4))),
        Case("inclusion proof: tree size not the checkpoint's", False, False, edit_bundle=_same_path_larger_tree,
             sigstore_python=(True, True),
             why="sigstore-python compares the checkpoint's root with the proof's, never its size: a proof whose "
                 "path keeps its shape in a larger tree computes the same root"),
        Case("checkpoint with a wrong signature", False, False, Signing(checkpoint="wrong-signature")),
        Case("checkpoint of a smaller tree", False, False, Signing(checkpoint="other-tree")),
        Case("checkpoint of another root hash", False, False, Signing(checkpoint="other-root")),
        Case("log entry body re-serialized", False, False,
             edit_bundle=_set(("canonicalizedBody",), _body_reserialized)),
        Case("entry of an untrusted log", False, False, Signing(tlog=stranger.tlog)),
        Case("log key expired before the signing", False, False,
             trusted_root={"tlogs": [replace(sigstore.tlog.key, valid_until=now - timedelta(seconds=1))]},
             sigstore_python=(True, True), why=WINDOW_AT_VERIFICATION),
        Case("log key not yet valid", False, False,
             trusted_root={"tlogs": [replace(sigstore.tlog.key, valid_from=now + day)]}),
    ]


def reference_variants() -> list[Path]:
    variants = sorted(p.parent for p in (BUILD / "kernels" / "build").glob("*/metadata.json"))
    if not variants:
        pytest.skip(f"the reference kernels are not built under {BUILD / 'kernels' / 'build'} "
                    "(build the reference_kernels_cpu target)")
    return variants


@dataclass
class Check:
    """One case written out: a variant folder (metadata.json, metadata.json.sigstore) and its root."""

    case: Case
    variant: Path
    trusted_root: Path
    label: str


def write_checks(folder: Path) -> list[Check]:
    variants = reference_variants()
    sigstore, stranger = LocalSigstore(folder / "sigstore"), LocalSigstore(folder / "stranger", name="stranger")
    metadata = (variants[0] / "metadata.json").read_bytes()
    another_signing = sigstore.sign(metadata, Signing(KERNELS_COMMUNITY_RS))
    cases = make_cases(sigstore, stranger)
    assert len({c.name for c in cases}) == len(cases)
    # The good signing of every reference variant, then each change on the first variant.
    jobs = [(replace(cases[0], name=f"{cases[0].name} ({v.name})"), v) for v in variants]
    jobs += [(case, variants[0]) for case in cases[1:]]
    checks = []
    for number, (case, source) in enumerate(jobs):
        variant = folder / "cases" / f"{number:02d}" / source.name
        variant.mkdir(parents=True)
        original = (source / "metadata.json").read_bytes()
        (variant / "metadata.json").write_bytes(original)
        bundle_path = variant / "metadata.json.sigstore"
        if case.signing == Signing():  # by the helper that end-to-end tests use
            assert sign_variant(variant, KERNELS_COMMUNITY, sigstore) == sigstore.trusted_root_path
        else:
            bundle_path.write_text(json.dumps(sigstore.sign(original, case.signing)))
        if case.edit_bundle:
            bundle = json.loads(bundle_path.read_text())
            case.edit_bundle(bundle, another_signing)
            bundle_path.write_text(json.dumps(bundle, indent=2) + "\n")
        if case.edit_metadata:
            (variant / "metadata.json").write_bytes(case.edit_metadata(original))
        trusted_root = sigstore.trusted_root_path
        if case.trusted_root is not None:
            trusted_root = sigstore.write_trusted_root(variant.parent / "trusted_root.json", **case.trusted_root)
        checks.append(Check(case, variant, trusted_root, case.name))
    return checks


def oracle_verdicts(checks: list[Check]) -> tuple[list[dict], list[dict]]:
    """sigstore-python's verdicts: (under kernels' policy, under the identity), one child for all."""
    folder = oracle_folder(ROOT)
    if not (folder / "sigstore").is_dir():
        pytest.skip(f"sigstore 4.5.1 is not installed in {folder} (scripts/bootstrap.sh --test installs it)")
    requests = [{"variant": str(c.variant), "trusted_root": str(c.trusted_root)} for c in checks]
    requests += [dict(r, identity=WANTED_IDENTITY, issuer=GITHUB_ISSUER) for r in requests]
    out = subprocess.run([sys.executable, str(ORACLE)], input=json.dumps(requests), capture_output=True, text=True,
                         env=oracle_env(os.environ, folder), timeout=300)
    assert out.returncode == 0, out.stderr
    verdicts = json.loads(out.stdout)
    return verdicts[:len(checks)], verdicts[len(checks):]


def kernelhub_verdict(check: Check, *policy: str) -> dict:
    out = subprocess.run([str(KERNELHUB), "sigstore", "verify-bundle", *policy, "--trusted-root",
                          str(check.trusted_root), "--bundle", str(check.variant / "metadata.json.sigstore"),
                          str(check.variant / "metadata.json")], capture_output=True, text=True, timeout=60)
    assert out.returncode >= 0, f"{check.label}: kernelhub died of signal {-out.returncode}: {out.stderr}"
    lines = (out.stderr or out.stdout).strip().splitlines()
    return {"verified": out.returncode == 0, "reason": lines[-1] if lines else f"exit {out.returncode}"}


def kernelhub_has_sigstore() -> bool:
    if not KERNELHUB.exists():
        return False
    out = subprocess.run([str(KERNELHUB), "sigstore", "verify-bundle", "--help"], capture_output=True, text=True,
                         timeout=60)
    return out.returncode == 0


@pytest.fixture(scope="module")
def checks(tmp_path_factory) -> list[Check]:
    return write_checks(tmp_path_factory.mktemp("sigstore-differential"))


@pytest.fixture(scope="module")
def oracle(checks):
    return oracle_verdicts(checks)


def _verdicts(by_policy: list[dict], by_identity: list[dict]) -> list[tuple[bool, bool]]:
    return [(p["verified"], i["verified"]) for p, i in zip(by_policy, by_identity)]


def _table(checks: list[Check], columns: dict[str, list[tuple[bool, bool]]]) -> str:
    """One row a case: each column's verdicts as kernels' policy / as the identity, then why
    sigstore-python differs where it does."""
    def words(pair: tuple[bool, bool]) -> str:
        return "/".join("verified" if v else "refused" for v in pair)

    width = max(len(c.label) for c in checks)
    lines = [f"verdicts as kernels' policy / as the identity {WANTED_IDENTITY}",
             f"{'case':<{width}}" + "".join(f" {name:<18}" for name in columns)]
    for row, check in enumerate(checks):
        pairs = [column[row] for column in columns.values()]
        note = f"  ({check.case.why})" if len(set(pairs)) > 1 else ""
        lines.append(f"{check.label:<{width}}" + "".join(f" {words(p):<18}" for p in pairs) + note)
    return "\n".join(lines)


def test_sigstore_python_gives_each_case_its_verdict(checks, oracle):
    """The oracle on the test instance: the good signings pass, every change is refused (less the
    documented cases), so the generator makes what the real Sigstore makes."""
    sigstore_python = _verdicts(*oracle)
    expected = [(c.case.kernels, c.case.identity) for c in checks]
    print("\n" + _table(checks, {"expected": expected, "sigstore-python": sigstore_python}))
    wrong = [f"{check.label}: expected {check.case.sigstore_python or want}, got {got}: {p['reason']} / {i['reason']}"
             for check, want, got, p, i in zip(checks, expected, sigstore_python, *oracle)
             if got != (check.case.sigstore_python or want)]
    assert len(checks) >= 40
    assert not wrong, "\n".join(wrong)


def test_kernelhub_agrees_with_sigstore_python(checks, oracle):
    if not kernelhub_has_sigstore():
        pytest.skip(f"{KERNELHUB} has no `sigstore verify-bundle` command (build the kernelhub target of a "
                    "checkout with the sigstore layer)")
    start = time.monotonic()
    identity_flags = ("--certificate-identity", WANTED_IDENTITY, "--certificate-oidc-issuer", GITHUB_ISSUER)
    with ThreadPoolExecutor(max_workers=2) as pool:
        by_policy = list(pool.map(lambda c: kernelhub_verdict(c, "--policy", "kernels"), checks))
        by_identity = list(pool.map(lambda c: kernelhub_verdict(c, *identity_flags), checks))
    elapsed = time.monotonic() - start
    ours, sigstore_python = _verdicts(by_policy, by_identity), _verdicts(*oracle)
    expected = [(c.case.kernels, c.case.identity) for c in checks]
    print(f"\nkernelhub: {2 * len(checks)} runs in {elapsed:.1f} s\n"
          + _table(checks, {"expected": expected, "sigstore-python": sigstore_python, "kernelhub": ours}))
    wrong = []
    for check, want, theirs, got, p, i in zip(checks, expected, sigstore_python, ours, by_policy, by_identity):
        if got != want:
            wrong.append(f"{check.label}: expected {want}, kernelhub gave {got}: {p['reason']} / {i['reason']}")
        elif got != theirs and check.case.sigstore_python is None:
            wrong.append(f"{check.label}: sigstore-python gave {theirs}, kernelhub {got}, and no reason is known")
    assert not wrong, "\n".join(wrong)


def test_kernelhub_trusts_the_root_sign_variant_returns(tmp_path):
    """The end-to-end tests' way in: `sign_variant` signs a copy of a reference variant and returns a
    root; KERNELHUB_SIGSTORE_TRUSTED_ROOT pointed at it makes kernelhub trust the test instance, and
    without it the embedded public-good root does not."""
    if not kernelhub_has_sigstore():
        pytest.skip(f"{KERNELHUB} has no `sigstore verify-bundle` command")
    variant = tmp_path / reference_variants()[0].name
    variant.mkdir()
    (variant / "metadata.json").write_bytes((reference_variants()[0] / "metadata.json").read_bytes())
    trusted_root = sign_variant(variant, KERNELS_COMMUNITY_RS)
    command = [str(KERNELHUB), "sigstore", "verify-bundle", "--policy", "kernels", "--bundle",
               str(variant / "metadata.json.sigstore"), str(variant / "metadata.json")]
    env = {k: v for k, v in os.environ.items() if k != "KERNELHUB_SIGSTORE_TRUSTED_ROOT"}
    trusted = subprocess.run(command, capture_output=True, text=True, timeout=60,
                             env=dict(env, KERNELHUB_SIGSTORE_TRUSTED_ROOT=str(trusted_root)))
    assert trusted.returncode == 0, trusted.stderr
    public_good = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    assert public_good.returncode > 0, public_good.stderr  # refused, not killed
