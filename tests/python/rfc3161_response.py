"""RFC 3161 timestamp responses, for the test Sigstore's timestamp authority (sigstore_testing.py): a
DER TimeStampResp, the form a Sigstore bundle carries in
`timestampVerificationData.rfc3161Timestamps[].signedTimestamp`.

The token is CMS SignedData (RFC 5652) over a TSTInfo (RFC 3161 section 2.4.2), signed by the TSA's
certificate (which must have the extended key usage timeStamping, critical: RFC 3161 section 2.3) with
the signed attributes contentType, messageDigest and signingCertificateV2 (RFC 5035), the certificate
embedded.
`cryptography` builds the certificates; it has no builder for a SignedData of another content type than
id-data, so the ASN.1 is written here with the few DER encoders below.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

SHA256 = "2.16.840.1.101.3.4.2.1"
ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2"
SIGNED_DATA = "1.2.840.113549.1.7.2"
TST_INFO = "1.2.840.113549.1.9.16.1.4"
CONTENT_TYPE = "1.2.840.113549.1.9.3"
MESSAGE_DIGEST = "1.2.840.113549.1.9.4"
SIGNING_CERTIFICATE_V2 = "1.2.840.113549.1.9.16.2.47"
POLICY = "1.3.6.1.4.1.57264.2"  # any OID serves; Sigstore's TSA answers under its own arc


def der(tag: int, content: bytes) -> bytes:
    """A DER TLV of one-byte `tag`, with the definite length form X.690 section 8.1.3 gives."""
    size = len(content)
    if size < 0x80:
        return bytes([tag, size]) + content
    length = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(length)]) + length + content


def sequence(*items: bytes) -> bytes:
    return der(0x30, b"".join(items))


def set_of(*items: bytes) -> bytes:
    return der(0x31, b"".join(sorted(items)))  # DER orders a SET OF by its encodings (X.690 11.6)


def integer(value: int) -> bytes:
    return der(0x02, value.to_bytes(value.bit_length() // 8 + 1, "big", signed=True))


def octet_string(value: bytes) -> bytes:
    return der(0x04, value)


def oid(dotted: str) -> bytes:
    arcs = [int(a) for a in dotted.split(".")]
    body = bytearray([40 * arcs[0] + arcs[1]])
    for arc in arcs[2:]:
        chunk = [arc & 0x7F]
        while arc > 0x7F:
            arc >>= 7
            chunk.append(0x80 | (arc & 0x7F))
        body += bytes(reversed(chunk))
    return der(0x06, bytes(body))


def explicit(number: int, content: bytes) -> bytes:
    return der(0xA0 | number, content)


def generalized_time(when: datetime) -> bytes:
    return der(0x18, when.astimezone(timezone.utc).strftime("%Y%m%d%H%M%SZ").encode())


def _attribute(kind: str, value: bytes) -> bytes:
    return sequence(oid(kind), set_of(value))


def timestamp_response(signing_key: ec.EllipticCurvePrivateKey, certificate: x509.Certificate, message: bytes,
                       when: datetime, serial: int) -> bytes:
    """A granted TimeStampResp (RFC 3161 section 2.4.2) over SHA-256(`message`) at `when`, signed with
    `signing_key`, whose certificate is `certificate`."""
    sha256 = sequence(oid(SHA256))
    tst_info = sequence(
        integer(1), oid(POLICY), sequence(sha256, octet_string(hashlib.sha256(message).digest())),
        integer(serial), generalized_time(when))
    certificate_der = certificate.public_bytes(serialization.Encoding.DER)
    signed_attributes = [
        _attribute(CONTENT_TYPE, oid(TST_INFO)),
        _attribute(MESSAGE_DIGEST, octet_string(hashlib.sha256(tst_info).digest())),
        _attribute(SIGNING_CERTIFICATE_V2, sequence(sequence(sequence(
            octet_string(hashlib.sha256(certificate_der).digest()))))),
    ]
    # The signature is over the attributes as a SET OF; the SignerInfo holds them as [0] IMPLICIT.
    attributes = b"".join(sorted(signed_attributes))
    signature = signing_key.sign(der(0x31, attributes), ec.ECDSA(hashes.SHA256()))
    signer_info = sequence(
        integer(1), sequence(certificate.issuer.public_bytes(), integer(certificate.serial_number)),
        sha256, der(0xA0, attributes), sequence(oid(ECDSA_WITH_SHA256)), octet_string(signature))
    signed_data = sequence(
        integer(3), set_of(sha256), sequence(oid(TST_INFO), explicit(0, octet_string(tst_info))),
        der(0xA0, certificate_der), set_of(signer_info))
    token = sequence(oid(SIGNED_DATA), explicit(0, signed_data))
    return sequence(sequence(integer(0)), token)  # status: granted
