"""A Sigstore instance of the tests' own, made in the test: a Fulcio-like CA, a CT log, a Rekor-v1-like
transparency log, a timestamp authority, and the `trusted_root.json` that trusts them. It signs an
artifact into a v0.3 bundle (hashedrekord 0.0.1, a message signature) the way the public instance does
for a GitHub Actions workflow, so a verifier can be given a root it trusts and bundles it must accept or
refuse.

- `LocalSigstore(directory)`: the instance, its root in `trusted_root_path` (protobuf-specs JSON, each
  key with its validity window; `write_trusted_root(path, ...)` writes one with other parts);
  `sign(artifact, Signing(...))` returns a bundle (a dict).
- `Signing`: how one bundle is made. Its defaults make what the public instance makes; each field names
  one thing a case may change (the certificate's identity and validity, the SCT, the inclusion promise,
  the checkpoint, ...).
- `sign_variant(variant_dir, identity)`: writes `<variant>/metadata.json.sigstore` over the variant's
  `metadata.json` and returns the trusted root's path (point KERNELHUB_SIGSTORE_TRUSTED_ROOT at it).

What is made, and where the rules come from:
- Certificates: root and intermediate (ECDSA P-384, SHA-384; a TSA's the same, with a P-256
  timestamping certificate) with SKI/AKI (cryptography's X.509
  verifier, which sigstore-python builds chains with, refuses a leaf without an AKI); the leaf has an
  empty subject, the workflow URI as a critical SAN, key usage digitalSignature, extended key usage
  codeSigning, and Fulcio's extensions (OIDs 1.3.6.1.4.1.57264.1.*: `.1` to `.6` raw bytes, `.8` onwards
  DER UTF8String).
- The SCT (OID 1.3.6.1.4.1.11129.2.4.2, RFC 6962 section 3.2) is over the precertificate: the leaf's
  TBSCertificate without the SCT list extension, after the SHA-256 of the issuer's SubjectPublicKeyInfo.
- Timestamps: RFC 3161 responses over the signature (rfc3161_response.py), from a TSA of the instance
  (a root and a timestamping certificate), where `Signing.timestamp` asks for one.
- The log: RFC 6962 Merkle tree over the entries' canonicalized bodies, inclusion proofs, a checkpoint in
  signed-note form (`origin\\nsize\\nroot\\n\\n— name base64(keyhint || signature)\\n`, the key hint being the
  first 4 bytes of the log id), and the SET over the RFC 8785 JSON of body, integratedTime, logID,
  logIndex.
"""

from __future__ import annotations

import atexit
import base64
import hashlib
import json
import shutil
import struct
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Literal, Mapping
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

from rfc3161_response import der, timestamp_response

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
BUNDLE_MEDIA_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"
TRUSTED_ROOT_MEDIA_TYPE = "application/vnd.dev.sigstore.trustedroot+json;version=0.1"
FULCIO_ARC = "1.3.6.1.4.1.57264"
SCT_LIST_OID = ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")
# Fulcio's extensions that hold raw bytes (the deprecated V1 set); the others are DER UTF8String.
_RAW_EXTENSIONS = {"1.1", "1.2", "1.3", "1.4", "1.5", "1.6"}


@dataclass(frozen=True)
class Identity:
    """A GitHub Actions workflow run, as Fulcio writes it into a certificate."""

    repository: str  # "huggingface/kernels-community"
    workflow: str = "build.yaml"
    ref: str = "refs/heads/main"
    issuer: str = GITHUB_ISSUER
    commit: str = "0123456789abcdef0123456789abcdef01234567"

    @property
    def workflow_uri(self) -> str:
        """The SAN and build signer URI: https://github.com/ORG/REPO/.github/workflows/FILE@REF."""
        return f"https://github.com/{self.repository}/.github/workflows/{self.workflow}@{self.ref}"

    @property
    def repository_uri(self) -> str:
        return f"https://github.com/{self.repository}"

    def extensions(self) -> dict[str, str]:
        """Fulcio's extensions for this run, by OID arc under 1.3.6.1.4.1.57264, in Fulcio's order."""
        owner = self.repository.split("/")[0]
        return {
            "1.1": self.issuer,
            "1.2": "push",
            "1.3": self.commit,
            "1.4": "Build kernels",
            "1.5": self.repository,
            "1.6": self.ref,
            "1.8": self.issuer,
            "1.9": self.workflow_uri,
            "1.10": self.commit,
            "1.11": "github-hosted",
            "1.12": self.repository_uri,
            "1.13": self.commit,
            "1.14": self.ref,
            "1.15": "123456789",
            "1.16": f"https://github.com/{owner}",
            "1.17": "987654321",
            "1.18": self.workflow_uri,
            "1.19": self.commit,
            "1.20": "push",
            "1.21": f"{self.repository_uri}/actions/runs/1/attempts/1",
            "1.22": "public",
        }


KERNELS_COMMUNITY = Identity("huggingface/kernels-community")
KERNELS_COMMUNITY_RS = Identity("huggingface/kernels-community-rs")


def _rfc3339(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _valid_for(start: datetime, end: datetime | None) -> dict:
    """A trusted root's TimeRange: closed at both ends, open-ended without an end."""
    return {"start": _rfc3339(start), **({"end": _rfc3339(end)} if end is not None else {})}


def _authority_entry(chain: list[x509.Certificate], url: str, start: datetime, end: datetime | None) -> dict:
    """A trusted root's CertificateAuthority (a Fulcio CA or a TSA): its chain from leaf to root."""
    return {
        "subject": {"organization": "kernelhub tests", "commonName": url},
        "uri": url,
        "certChain": {"certificates": [{"rawBytes": _b64(c.public_bytes(serialization.Encoding.DER))} for c in chain]},
        "validFor": _valid_for(start, end),
    }


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _spki(key: ec.EllipticCurvePublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def _key_details(key: ec.EllipticCurvePrivateKey) -> str:
    return {"secp256r1": "PKIX_ECDSA_P256_SHA_256", "secp384r1": "PKIX_ECDSA_P384_SHA_384"}[key.curve.name]


def canonical_json(value) -> bytes:
    """RFC 8785 for what the SET covers (ASCII strings and integers): sorted keys, no spaces."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


@dataclass(frozen=True)
class LogKey:
    """A log's signing key and the window the trusted root gives it (CT log or transparency log)."""

    private_key: ec.EllipticCurvePrivateKey
    url: str
    valid_from: datetime
    valid_until: datetime | None = None

    @staticmethod
    def create(url: str, valid_from: datetime) -> LogKey:
        return LogKey(ec.generate_private_key(ec.SECP256R1()), url, valid_from)

    @property
    def log_id(self) -> bytes:
        """RFC 6962's key id: SHA-256 of the DER SubjectPublicKeyInfo."""
        return hashlib.sha256(_spki(self.private_key.public_key())).digest()

    def sign(self, data: bytes) -> bytes:
        return self.private_key.sign(data, ec.ECDSA(hashes.SHA256()))

    def trusted_root_entry(self) -> dict:
        return {
            "baseUrl": self.url,
            "hashAlgorithm": "SHA2_256",
            "publicKey": {
                "rawBytes": _b64(_spki(self.private_key.public_key())),
                "keyDetails": _key_details(self.private_key),
                "validFor": _valid_for(self.valid_from, self.valid_until),
            },
            "logId": {"keyId": _b64(self.log_id)},
        }


@dataclass(frozen=True)
class CertificateAuthority:
    """A root and the one certificate it issues for the work: a Fulcio-like intermediate, which issues
    the signing certificates, or a TSA's timestamping certificate."""

    root: x509.Certificate
    signing_key: ec.EllipticCurvePrivateKey
    signing_certificate: x509.Certificate
    url: str
    valid_from: datetime
    valid_until: datetime | None = None

    @staticmethod
    def create(name: str, purpose: Literal["fulcio", "tsa"], valid_from: datetime) -> CertificateAuthority:
        not_after = valid_from + timedelta(days=3650)
        root_key = ec.generate_private_key(ec.SECP384R1())
        signing_key = ec.generate_private_key(ec.SECP256R1() if purpose == "tsa" else ec.SECP384R1())
        root_name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, name),
                               x509.NameAttribute(NameOID.COMMON_NAME, f"{name} {purpose} root")])
        root = _certificate(root_name, root_key.public_key(), root_name, root_key, valid_from, not_after)
        signing_name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, name),
                                  x509.NameAttribute(NameOID.COMMON_NAME, f"{name} {purpose}")])
        signing_certificate = _certificate(signing_name, signing_key.public_key(), root_name, root_key, valid_from,
                                           not_after, timestamping=purpose == "tsa")
        return CertificateAuthority(root, signing_key, signing_certificate, f"https://{name}.{purpose}.test",
                                    valid_from)

    def trusted_root_entry(self) -> dict:
        return _authority_entry([self.signing_certificate, self.root], self.url, self.valid_from, self.valid_until)

    def timestamp(self, message: bytes, when: datetime, serial: int) -> bytes:
        """An RFC 3161 response over `message` at `when` (a TSA's)."""
        return timestamp_response(self.signing_key, self.signing_certificate, message, when, serial)


def _certificate(subject, public_key, issuer, issuer_key, not_before, not_after, *, timestamping=False):
    """A CA certificate (path length 0 below a root), or with `timestamping` a TSA's: key usage
    digitalSignature and the critical extended key usage timeStamping (RFC 3161 section 2.3)."""
    self_signed = issuer_key.public_key() == public_key
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=not timestamping, path_length=None if self_signed or timestamping
                                             else 0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=timestamping, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=not timestamping,
                                     crl_sign=not timestamping, encipher_only=False, decipher_only=False),
                       critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    )
    if timestamping:
        builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True)
    if not self_signed:
        builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
                                        critical=False)
    return builder.sign(issuer_key, hashes.SHA384())


def _leaf_hash(body: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + body).digest()


def _node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(size: int) -> int:
    """RFC 6962 section 2.1: the largest power of two smaller than `size`."""
    return 1 << ((size - 1).bit_length() - 1)


class TransparencyLog:
    """A Rekor-v1-like log: entries in an RFC 6962 Merkle tree, signed checkpoints and SETs."""

    def __init__(self, key: LogKey, tree_id: int = 1193050959916656506):
        self.key = key
        # As Rekor v1 names itself: the host of its URL, then its tree's id; the host signs the note.
        self.name = urlsplit(key.url).hostname
        self.origin = f"{self.name} - {tree_id}"
        self.leaves: list[bytes] = []
        # Entries that others logged before ours: proofs then have inner and border hashes.
        for filler in range(5):
            self.append(f"another entry {filler}".encode())

    def append(self, body: bytes) -> int:
        self.leaves.append(_leaf_hash(body))
        return len(self.leaves) - 1

    def root(self, size: int) -> bytes:
        return self._subtree(0, size)

    def _subtree(self, start: int, end: int) -> bytes:
        if end - start == 1:
            return self.leaves[start]
        middle = start + _split(end - start)
        return _node_hash(self._subtree(start, middle), self._subtree(middle, end))

    def inclusion_proof(self, index: int, size: int) -> list[bytes]:
        """RFC 6962 section 2.1.1's PATH(index, D[0:size]), from the leaf up."""
        return self._path(index, 0, size)

    def _path(self, index: int, start: int, end: int) -> list[bytes]:
        if end - start == 1:
            return []
        middle = start + _split(end - start)
        if start + index < middle:
            return self._path(index, start, middle) + [self._subtree(middle, end)]
        return self._path(index - (middle - start), middle, end) + [self._subtree(start, middle)]

    def checkpoint(self, size: int, *, root: bytes | None = None, signed_text: str | None = None) -> str:
        """The signed note of the tree of `size` entries; another `root`, or a `signed_text` of its own,
        makes a wrong one."""
        text = f"{self.origin}\n{size}\n{_b64(root or self.root(size))}\n"
        signature = self.key.sign((signed_text or text).encode())
        return f"{text}\n\u2014 {self.name} {_b64(self.key.log_id[:4] + signature)}\n"

    def signed_entry_timestamp(self, body: bytes, integrated_time: int, index: int) -> bytes:
        payload = {"body": _b64(body), "integratedTime": integrated_time, "logID": self.key.log_id.hex(),
                   "logIndex": index}
        return self.key.sign(canonical_json(payload))


@dataclass(frozen=True)
class Signing:
    """How one bundle is made. The defaults make what the public instance makes for `identity`."""

    identity: Identity = KERNELS_COMMUNITY
    # Changes to Fulcio's extension values, by OID arc ("1.8"); None leaves the extension out.
    extensions: Mapping[str, str | None] = field(default_factory=dict)
    signed_at: datetime | None = None  # the log's integrated time; None: the instance's `now`
    certificate_starts: timedelta = timedelta(minutes=-1)  # relative to signed_at
    certificate_lasts: timedelta = timedelta(minutes=10)
    digital_signature_usage: bool = True
    code_signing_usage: bool = True
    ca: CertificateAuthority | None = None  # None: the instance's
    sct: Literal["valid", "missing", "wrong-signature"] = "valid"
    ct_log: LogKey | None = None  # the log that signs the SCT; None: the instance's
    tlog: TransparencyLog | None = None  # None: the instance's
    inclusion_promise: Literal["valid", "missing", "wrong-signature"] = "valid"
    checkpoint: Literal["valid", "wrong-signature", "other-tree", "other-root"] = "valid"
    signed_by_certificate_key: bool = True  # False: another key signs the artifact
    logged_artifact: bytes | None = None  # what the log entry records; None: the artifact
    # An RFC 3161 timestamp over the signature, from `tsa` (None: the instance's) at signed_at + timestamped.
    timestamp: Literal["none", "valid", "other-signature"] = "none"
    tsa: CertificateAuthority | None = None
    timestamped: timedelta = timedelta(seconds=1)


class LocalSigstore:
    """A CA, a CT log, a transparency log and a TSA, each trusted by `trusted_root()` from `now - 30 days`."""

    def __init__(self, directory: Path | None = None, now: datetime | None = None, name: str = "kernelhub-test"):
        """`directory` receives trusted_root.json (`trusted_root_path`); by default a temporary
        folder removed when the process exits."""
        self.now = (now or datetime.now(timezone.utc)).replace(microsecond=0)
        start = self.now - timedelta(days=30)
        self.ca = CertificateAuthority.create(name, "fulcio", start)
        self.ct_log = LogKey.create(f"https://{name}.ctfe.test", start)
        self.tlog = TransparencyLog(LogKey.create(f"https://{name}.rekor.test", start))
        self.tsa = CertificateAuthority.create(name, "tsa", start)
        if directory is None:
            directory = Path(tempfile.mkdtemp(prefix="kernelhub-sigstore-"))
            atexit.register(shutil.rmtree, directory, ignore_errors=True)
        directory.mkdir(parents=True, exist_ok=True)
        self.trusted_root_path = self.write_trusted_root(directory / "trusted_root.json")

    def trusted_root(self, *, cas=None, ctlogs=None, tlogs=None, tsas=None) -> dict:
        """The root that trusts this instance; `cas`, `ctlogs`, `tlogs`, `tsas` replace its parts."""
        return {
            "mediaType": TRUSTED_ROOT_MEDIA_TYPE,
            "tlogs": [k.trusted_root_entry() for k in (tlogs if tlogs is not None else [self.tlog.key])],
            "certificateAuthorities": [c.trusted_root_entry() for c in (cas if cas is not None else [self.ca])],
            "ctlogs": [k.trusted_root_entry() for k in (ctlogs if ctlogs is not None else [self.ct_log])],
            "timestampAuthorities": [t.trusted_root_entry() for t in (tsas if tsas is not None else [self.tsa])],
        }

    def write_trusted_root(self, path: Path, **parts) -> Path:
        path.write_text(json.dumps(self.trusted_root(**parts), indent=2) + "\n")
        return path

    def certificate(self, public_key: ec.EllipticCurvePublicKey, how: Signing, signed_at: datetime) -> x509.Certificate:
        """The signing certificate Fulcio would issue for `how.identity`, with an embedded SCT."""
        ca = how.ca or self.ca
        values = {**how.identity.extensions(), **how.extensions}
        not_before = signed_at + how.certificate_starts
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([]))
            .issuer_name(ca.signing_certificate.subject)
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(not_before)
            .not_valid_after(not_before + how.certificate_lasts)
            .add_extension(x509.KeyUsage(digital_signature=how.digital_signature_usage,
                                         content_commitment=not how.digital_signature_usage, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING if how.code_signing_usage
                                                  else ExtendedKeyUsageOID.EMAIL_PROTECTION]), critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.signing_key.public_key()),
                           critical=False)
            .add_extension(x509.SubjectAlternativeName([x509.UniformResourceIdentifier(how.identity.workflow_uri)]),
                           critical=True)  # critical: the subject is empty (RFC 5280 section 4.2.1.6)
        )
        for arc, value in values.items():
            if value is not None:
                encoded = value.encode() if arc in _RAW_EXTENSIONS else der(0x0C, value.encode())
                builder = builder.add_extension(x509.UnrecognizedExtension(ObjectIdentifier(f"{FULCIO_ARC}.{arc}"),
                                                                           encoded), critical=False)
        if how.sct == "missing":
            return builder.sign(ca.signing_key, hashes.SHA384())
        precertificate_tbs = builder.sign(ca.signing_key, hashes.SHA384()).tbs_certificate_bytes
        issuer_key_hash = hashlib.sha256(_spki(ca.signing_key.public_key())).digest()
        sct = _sct(how.ct_log or self.ct_log, precertificate_tbs, issuer_key_hash, not_before,
                   wrong_signature=how.sct == "wrong-signature")
        certificate = builder.add_extension(x509.UnrecognizedExtension(SCT_LIST_OID, sct), critical=False).sign(
            ca.signing_key, hashes.SHA384())
        assert certificate.tbs_precertificate_bytes == precertificate_tbs  # the SCT list is the last extension
        return certificate

    def sign(self, artifact: bytes, how: Signing = Signing()) -> dict:
        """A v0.3 bundle over `artifact`: certificate, hashedrekord 0.0.1 log entry, message signature."""
        signed_at = how.signed_at or self.now
        leaf_key = ec.generate_private_key(ec.SECP256R1())
        certificate = self.certificate(leaf_key.public_key(), how, signed_at)
        signer = leaf_key if how.signed_by_certificate_key else ec.generate_private_key(ec.SECP256R1())
        signature = signer.sign(artifact, ec.ECDSA(hashes.SHA256()))
        digest = hashlib.sha256(artifact).digest()
        logged_digest = hashlib.sha256(how.logged_artifact if how.logged_artifact is not None else artifact).digest()
        body = canonical_json({
            "apiVersion": "0.0.1",
            "kind": "hashedrekord",
            "spec": {
                "data": {"hash": {"algorithm": "sha256", "value": logged_digest.hex()}},
                "signature": {"content": _b64(signature),
                              "publicKey": {"content": _b64(certificate.public_bytes(serialization.Encoding.PEM))}},
            },
        })
        tlog = how.tlog or self.tlog
        index = tlog.append(body)
        tlog.append(f"an entry logged after {index}".encode())  # the proof then has an inner part
        size = len(tlog.leaves)
        integrated_time = int(signed_at.timestamp())
        if how.checkpoint == "valid":
            checkpoint = tlog.checkpoint(size)
        elif how.checkpoint == "wrong-signature":
            checkpoint = tlog.checkpoint(size, signed_text=f"{tlog.origin}\n{size}\n{_b64(tlog.root(size - 1))}\n")
        elif how.checkpoint == "other-tree":  # rightly signed, of the tree one entry smaller
            checkpoint = tlog.checkpoint(size - 1)
        else:  # rightly signed, of the proof's tree size with another root
            checkpoint = tlog.checkpoint(size, root=tlog.root(size - 1))
        entry = {
            "logIndex": str(index),
            "logId": {"keyId": _b64(tlog.key.log_id)},
            "kindVersion": {"kind": "hashedrekord", "version": "0.0.1"},
            "integratedTime": str(integrated_time),
            "inclusionProof": {
                "logIndex": str(index),
                "rootHash": _b64(tlog.root(size)),
                "treeSize": str(size),
                "hashes": [_b64(h) for h in tlog.inclusion_proof(index, size)],
                "checkpoint": {"envelope": checkpoint},
            },
            "canonicalizedBody": _b64(body),
        }
        if how.inclusion_promise != "missing":
            set_index = index if how.inclusion_promise == "valid" else index + 1
            entry["inclusionPromise"] = {
                "signedEntryTimestamp": _b64(tlog.signed_entry_timestamp(body, integrated_time, set_index))}
        timestamps = []
        if how.timestamp != "none":
            stamped = signature if how.timestamp == "valid" else signer.sign(b"another file", ec.ECDSA(hashes.SHA256()))
            response = (how.tsa or self.tsa).timestamp(stamped, signed_at + how.timestamped, serial=index)
            timestamps.append({"signedTimestamp": _b64(response)})
        return {
            "mediaType": BUNDLE_MEDIA_TYPE,
            "verificationMaterial": {
                "certificate": {"rawBytes": _b64(certificate.public_bytes(serialization.Encoding.DER))},
                "tlogEntries": [entry],
                "timestampVerificationData": {"rfc3161Timestamps": timestamps},
            },
            "messageSignature": {"messageDigest": {"algorithm": "SHA2_256", "digest": _b64(digest)},
                                 "signature": _b64(signature)},
        }


def _sct(ct_log: LogKey, precertificate_tbs: bytes, issuer_key_hash: bytes, issued: datetime, *,
         wrong_signature: bool) -> bytes:
    """The SCT list extension's value (an OCTET STRING of the TLS-encoded list) of one SCT,
    RFC 6962 section 3.2 and 3.3."""
    timestamp = int(issued.timestamp() * 1000)
    signed = (struct.pack(">BBQH", 0, 0, timestamp + (1 if wrong_signature else 0), 1) + issuer_key_hash
              + len(precertificate_tbs).to_bytes(3, "big") + precertificate_tbs + struct.pack(">H", 0))
    signature = ct_log.sign(signed)
    sct = (struct.pack(">B", 0) + ct_log.log_id + struct.pack(">QH", timestamp, 0)
           + struct.pack(">BBH", 4, 3, len(signature)) + signature)  # SHA-256 (4), ECDSA (3)
    sct_list = struct.pack(">HH", len(sct) + 2, len(sct)) + sct
    return der(0x04, sct_list)


_process_instance: LocalSigstore | None = None


def sign_variant(variant: Path, identity: Identity = KERNELS_COMMUNITY, sigstore: LocalSigstore | None = None) -> Path:
    """Writes `variant`/metadata.json.sigstore over `variant`/metadata.json, as kernels' CI does,
    signed under `identity` by `sigstore` (by default one instance for the whole test process), and
    returns the path of the trusted root that trusts it: set KERNELHUB_SIGSTORE_TRUSTED_ROOT to it."""
    global _process_instance
    if sigstore is None:
        if _process_instance is None:
            _process_instance = LocalSigstore()
        sigstore = _process_instance
    bundle = sigstore.sign((variant / "metadata.json").read_bytes(), Signing(identity))
    (variant / "metadata.json.sigstore").write_text(json.dumps(bundle, indent=2) + "\n")
    return sigstore.trusted_root_path
