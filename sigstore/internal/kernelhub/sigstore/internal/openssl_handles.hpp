// Owning handles for the OpenSSL objects the sigstore layer uses: each is a unique_ptr whose
// deleter is the object's own free function, so no path (early return, error) leaks one.
//
// Thread safety: as unique_ptr; the objects themselves are used by one thread at a time.
#pragma once

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ts.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <string>

namespace kernelhub::sigstore {

template <auto FreeFunction>
struct OpensslFree {
  template <typename T>
  void operator()(T* object) const {
    FreeFunction(object);
  }
};

using UniqueBio = std::unique_ptr<BIO, OpensslFree<BIO_free_all>>;
using UniquePkey = std::unique_ptr<EVP_PKEY, OpensslFree<EVP_PKEY_free>>;
using UniquePkeyCtx = std::unique_ptr<EVP_PKEY_CTX, OpensslFree<EVP_PKEY_CTX_free>>;
using UniqueMdCtx = std::unique_ptr<EVP_MD_CTX, OpensslFree<EVP_MD_CTX_free>>;
using UniqueX509 = std::unique_ptr<X509, OpensslFree<X509_free>>;
using UniqueX509Store = std::unique_ptr<X509_STORE, OpensslFree<X509_STORE_free>>;
using UniqueX509StoreCtx = std::unique_ptr<X509_STORE_CTX, OpensslFree<X509_STORE_CTX_free>>;
using UniqueAsn1Object = std::unique_ptr<ASN1_OBJECT, OpensslFree<ASN1_OBJECT_free>>;
using UniqueAsn1Time = std::unique_ptr<ASN1_TIME, OpensslFree<ASN1_TIME_free>>;
using UniqueAsn1String = std::unique_ptr<ASN1_STRING, OpensslFree<ASN1_STRING_free>>;
using UniqueGeneralNames = std::unique_ptr<GENERAL_NAMES, OpensslFree<GENERAL_NAMES_free>>;
using UniqueExtendedKeyUsage = std::unique_ptr<EXTENDED_KEY_USAGE, OpensslFree<EXTENDED_KEY_USAGE_free>>;
using UniqueBasicConstraints = std::unique_ptr<BASIC_CONSTRAINTS, OpensslFree<BASIC_CONSTRAINTS_free>>;
using UniqueTsResponse = std::unique_ptr<TS_RESP, OpensslFree<TS_RESP_free>>;
using UniqueTsVerifyCtx = std::unique_ptr<TS_VERIFY_CTX, OpensslFree<TS_VERIFY_CTX_free>>;
using UniqueTsRespCtx = std::unique_ptr<TS_RESP_CTX, OpensslFree<TS_RESP_CTX_free>>;
using UniqueTsReq = std::unique_ptr<TS_REQ, OpensslFree<TS_REQ_free>>;
using UniqueTsMsgImprint = std::unique_ptr<TS_MSG_IMPRINT, OpensslFree<TS_MSG_IMPRINT_free>>;

// A STACK_OF(X509) that owns its certificates (sk_X509_pop_free).
struct X509StackFree {
  void operator()(STACK_OF(X509) * stack) const { sk_X509_pop_free(stack, X509_free); }
};
using UniqueX509Stack = std::unique_ptr<STACK_OF(X509), X509StackFree>;
// A STACK_OF(X509) that borrows its certificates (sk_X509_free: the stack alone).
struct X509StackShallowFree {
  void operator()(STACK_OF(X509) * stack) const { sk_X509_free(stack); }
};
using BorrowingX509Stack = std::unique_ptr<STACK_OF(X509), X509StackShallowFree>;

// Empties the thread's OpenSSL error queue when it goes out of scope: every public entry point of
// the layer has one, so a refused input leaves no error behind for the next OpenSSL user of the
// thread (libcurl's TLS reads that queue).
struct ClearOpensslErrorsOnExit {
  ClearOpensslErrorsOnExit() = default;
  ClearOpensslErrorsOnExit(const ClearOpensslErrorsOnExit&) = delete;
  ClearOpensslErrorsOnExit& operator=(const ClearOpensslErrorsOnExit&) = delete;
  ~ClearOpensslErrorsOnExit() { ERR_clear_error(); }
};

// Memory OpenSSL allocated for the caller (an i2d_* output, PEM_read_bio's fields).
struct OpensslMemoryFree {
  void operator()(void* memory) const { OPENSSL_free(memory); }
};
using UniqueOpensslBytes = std::unique_ptr<unsigned char, OpensslMemoryFree>;
using UniqueOpensslChars = std::unique_ptr<char, OpensslMemoryFree>;

// What an i2d-style encoder (`int encode(unsigned char** out)`, allocating *out) wrote; empty when
// it fails.
template <typename Encode>
std::string encoded(Encode encode) {
  unsigned char* raw = nullptr;
  const int size = encode(&raw);
  const UniqueOpensslBytes owned(raw);
  if (size <= 0 || raw == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(raw), static_cast<std::size_t>(size));
}

}  // namespace kernelhub::sigstore
