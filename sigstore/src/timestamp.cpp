#include "kernelhub/sigstore/internal/timestamp.hpp"

#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pkcs7.h>

#include "kernelhub/sigstore/internal/asn1_time.hpp"
#include "kernelhub/sigstore/internal/openssl_handles.hpp"

namespace kernelhub::sigstore {

namespace {

std::string openssl_reason() {
  const unsigned long code = ERR_peek_last_error();
  std::string reason = code == 0 ? "" : ERR_reason_error_string(code) ? ERR_reason_error_string(code) : "";
  ERR_clear_error();
  return reason.empty() ? std::string("it does not verify") : reason;
}

// Verifies `response` against one TSA. REQUIRES: gen_time is the response's genTime.
Status verify_with(const TS_RESP* response, Instant gen_time, std::string_view signed_bytes,
                   const Authority& authority) {
  // The anchor is the chain's last certificate; the others (the TSA's own certificate first) may
  // sign the response or link it to the anchor.
  UniqueX509Store store(X509_STORE_new());
  UniqueX509Stack certificates(sk_X509_new_null());
  if (!store || !certificates || X509_STORE_add_cert(store.get(), authority.certificates.back().get()) != 1) {
    return unexpected(ErrorCode::kInternal, "cannot set up timestamp verification");
  }
  for (const auto& certificate : authority.certificates) {
    X509_up_ref(certificate.get());
    sk_X509_push(certificates.get(), certificate.get());
  }
  X509_STORE_set_flags(store.get(), X509_V_FLAG_PARTIAL_CHAIN);
  // The chain as it was at genTime: a TSA certificate that has expired since still vouches for
  // the times it stamped while it was valid.
  X509_VERIFY_PARAM_set_time(X509_STORE_get0_param(store.get()),
                             std::chrono::floor<std::chrono::seconds>(gen_time).time_since_epoch().count());

  // The response must be signed by a certificate the root lists for this TSA, not merely one that
  // chains to its anchor.
  PKCS7* token = TS_RESP_get_token(const_cast<TS_RESP*>(response));
  const BorrowingX509Stack signers(PKCS7_get0_signers(token, certificates.get(), PKCS7_NOINTERN));
  if (!signers) {
    ERR_clear_error();
    return unexpected(ErrorCode::kBadSignature, "it is not signed by a certificate the root lists for it");
  }

  UniqueTsVerifyCtx ctx(TS_VERIFY_CTX_new());
  UniqueBio data(BIO_new_mem_buf(signed_bytes.data(), static_cast<int>(signed_bytes.size())));
  if (!ctx || !data) return unexpected(ErrorCode::kInternal, "cannot set up timestamp verification");
  TS_VERIFY_CTX_set_flags(ctx.get(), TS_VFY_VERSION | TS_VFY_SIGNATURE | TS_VFY_DATA);
  // The context takes ownership of the store, the certificates and the data.
  TS_VERIFY_CTX_set_store(ctx.get(), store.release());
  TS_VERIFY_CTX_set_certs(ctx.get(), certificates.release());
  TS_VERIFY_CTX_set_data(ctx.get(), data.release());
  if (TS_RESP_verify_response(ctx.get(), const_cast<TS_RESP*>(response)) != 1) {
    return unexpected(ErrorCode::kBadSignature, openssl_reason());
  }
  if (!authority.instance.valid_for.contains(gen_time)) {
    return unexpected(ErrorCode::kBadSignature, "its time, " + to_rfc3339(gen_time) +
                                                    ", is outside the period the root trusts the TSA for (" +
                                                    authority.instance.valid_for.to_string() + ")");
  }
  return {};
}

}  // namespace

Result<VerifiedTimestamp> verify_timestamp(std::string_view der, std::string_view signed_bytes,
                                           const std::vector<Authority>& authorities) {
  const auto* begin = reinterpret_cast<const unsigned char*>(der.data());
  const unsigned char* p = begin;
  UniqueTsResponse response(d2i_TS_RESP(nullptr, &p, static_cast<long>(der.size())));
  if (!response || p != begin + der.size()) {
    ERR_clear_error();
    return unexpected(ErrorCode::kCorruptFile, "an RFC 3161 timestamp is not a DER TimeStampResp");
  }
  TS_TST_INFO* info = TS_RESP_get_tst_info(response.get());
  if (info == nullptr || TS_RESP_get_token(response.get()) == nullptr) {
    return unexpected(ErrorCode::kBadSignature, "an RFC 3161 timestamp response grants no timestamp");
  }
  const auto gen_time = to_instant(TS_TST_INFO_get_time(info));
  if (!gen_time) return unexpected(ErrorCode::kCorruptFile, "an RFC 3161 timestamp has an unreadable genTime");
  const X509_ALGOR* algorithm = TS_MSG_IMPRINT_get_algo(TS_TST_INFO_get_msg_imprint(info));
  const ASN1_OBJECT* algorithm_oid = nullptr;
  X509_ALGOR_get0(&algorithm_oid, nullptr, nullptr, algorithm);
  const int hash = OBJ_obj2nid(algorithm_oid);
  if (hash != NID_sha256 && hash != NID_sha384 && hash != NID_sha512) {
    return unexpected(ErrorCode::kBadSignature, "an RFC 3161 timestamp imprints its message with " +
                                                    std::string(OBJ_nid2sn(hash)) + ", not SHA-256, 384 or 512");
  }
  if (authorities.empty()) {
    return unexpected(ErrorCode::kBadSignature,
                      "the bundle carries an RFC 3161 timestamp and the trusted root lists no timestamp authority");
  }
  std::string reasons;
  for (const auto& authority : authorities) {
    auto verified = verify_with(response.get(), *gen_time, signed_bytes, authority);
    if (verified) return VerifiedTimestamp{*gen_time, authority.instance.uri};
    if (verified.error().code == ErrorCode::kInternal) return unexpected(verified.error());
    reasons += (reasons.empty() ? "" : "; ") + ("`" + authority.instance.uri + "`: ") + verified.error().message;
  }
  return unexpected(ErrorCode::kBadSignature, "an RFC 3161 timestamp (" + to_rfc3339(*gen_time) +
                                                  ") is not one a trusted timestamp authority made over this "
                                                  "signature: " +
                                                  reasons);
}

}  // namespace kernelhub::sigstore
