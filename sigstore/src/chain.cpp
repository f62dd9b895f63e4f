#include "kernelhub/sigstore/chain.hpp"

#include <openssl/err.h>
#include <openssl/x509_vfy.h>

#include "kernelhub/sigstore/openssl_handles.hpp"

namespace kernelhub::sigstore {

Result<std::vector<Certificate>> verify_chain(const Certificate& leaf, const std::vector<Certificate>& authority,
                                              Instant at) {
  if (authority.empty()) return unexpected(ErrorCode::kBadSignature, "the certificate authority has no certificate");
  UniqueX509Store store(X509_STORE_new());
  struct StackFree {  // the stack borrows the certificates: free the stack alone
    void operator()(STACK_OF(X509) * stack) const { sk_X509_free(stack); }
  };
  std::unique_ptr<STACK_OF(X509), StackFree> untrusted(sk_X509_new_null());
  if (!store || !untrusted || X509_STORE_add_cert(store.get(), authority.back().get()) != 1) {
    return unexpected(ErrorCode::kInternal, "cannot set up certificate path verification");
  }
  for (std::size_t i = 0; i + 1 < authority.size(); ++i) sk_X509_push(untrusted.get(), authority[i].get());
  // The anchor is whatever the root lists last, and times are compared below as closed intervals
  // (OpenSSL takes notAfter itself as already expired).
  X509_STORE_set_flags(store.get(), X509_V_FLAG_PARTIAL_CHAIN | X509_V_FLAG_NO_CHECK_TIME);
  UniqueX509StoreCtx ctx(X509_STORE_CTX_new());
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store.get(), leaf.get(), untrusted.get()) != 1) {
    return unexpected(ErrorCode::kInternal, "cannot set up certificate path verification");
  }
  if (X509_verify_cert(ctx.get()) != 1) {
    const int reason = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return unexpected(ErrorCode::kBadSignature, "the certificate `" + leaf.subject() + "` issued by `" + leaf.issuer() +
                                                    "` does not chain to it: " + X509_verify_cert_error_string(reason));
  }
  std::vector<Certificate> path;
  STACK_OF(X509)* chain = X509_STORE_CTX_get0_chain(ctx.get());
  for (int i = 1; i < sk_X509_num(chain); ++i) {
    const X509* link = sk_X509_value(chain, i);
    for (const auto& candidate : authority) {
      if (candidate.get() == link) path.push_back(candidate);
    }
  }
  if (!leaf.valid_at(at)) {
    return unexpected(ErrorCode::kBadSignature, leaf.description() + " is valid from " + to_rfc3339(leaf.not_before()) +
                                                    " to " + to_rfc3339(leaf.not_after()) + ", not at " +
                                                    to_rfc3339(at));
  }
  for (const auto& link : path) {
    if (!link.valid_at(at)) {
      return unexpected(ErrorCode::kBadSignature, "its issuer " + link.description() + " is valid from " +
                                                      to_rfc3339(link.not_before()) + " to " +
                                                      to_rfc3339(link.not_after()) + ", not at " + to_rfc3339(at));
    }
  }
  return path;
}

}  // namespace kernelhub::sigstore
