#include "kernelhub/sigstore/internal/chain.hpp"

#include <openssl/err.h>
#include <openssl/x509_vfy.h>

#include "kernelhub/sigstore/internal/openssl_handles.hpp"

namespace kernelhub::sigstore {

Result<std::vector<Certificate>> verify_chain(const Certificate& leaf, const std::vector<Certificate>& authority,
                                              Instant at) {
  if (authority.empty()) return unexpected(ErrorCode::kBadSignature, "the certificate authority has no certificate");
  // Every certificate of the authority is trusted as the root lists it: its intermediates' own
  // signatures were the root's business when it was written, and are not checked again on every
  // verification (each is an ECDSA P-384 verification, the most costly step). The whole authority
  // must still be valid at `at`, checked below.
  UniqueX509Store store(X509_STORE_new());
  if (!store) return unexpected(ErrorCode::kInternal, "cannot set up certificate path verification");
  for (const auto& certificate : authority) {
    if (X509_STORE_add_cert(store.get(), certificate.get()) != 1) {
      return unexpected(ErrorCode::kInternal, "cannot set up certificate path verification");
    }
  }
  // Times are compared below as closed intervals (OpenSSL takes notAfter itself as expired).
  X509_STORE_set_flags(store.get(), X509_V_FLAG_PARTIAL_CHAIN | X509_V_FLAG_NO_CHECK_TIME);
  UniqueX509StoreCtx ctx(X509_STORE_CTX_new());
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store.get(), leaf.get(), nullptr) != 1) {
    return unexpected(ErrorCode::kInternal, "cannot set up certificate path verification");
  }
  if (X509_verify_cert(ctx.get()) != 1) {
    const int reason = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return unexpected(ErrorCode::kBadSignature,
                      leaf.description() + " (issued by `" + leaf.issuer() +
                          "`) does not chain to it: " + X509_verify_cert_error_string(reason));
  }
  // The path above the leaf: the certificate that issued it, then the rest of the authority.
  std::vector<Certificate> path;
  STACK_OF(X509)* chain = X509_STORE_CTX_get0_chain(ctx.get());
  const X509* issuer = sk_X509_num(chain) > 1 ? sk_X509_value(chain, 1) : nullptr;
  bool above = false;
  for (const auto& candidate : authority) {
    above = above || candidate.get() == issuer;
    if (above) path.push_back(candidate);
  }
  if (!leaf.valid_at(at)) {
    return unexpected(ErrorCode::kBadSignature, leaf.description() + " is valid from " + to_rfc3339(leaf.not_before()) +
                                                    " to " + to_rfc3339(leaf.not_after()) + ", not at " +
                                                    to_rfc3339(at));
  }
  for (const auto& link : authority) {
    if (!link.valid_at(at)) {
      return unexpected(ErrorCode::kBadSignature, "its authority's certificate " + link.description() +
                                                      " is valid from " + to_rfc3339(link.not_before()) + " to " +
                                                      to_rfc3339(link.not_after()) + ", not at " + to_rfc3339(at));
    }
  }
  return path;
}

}  // namespace kernelhub::sigstore
