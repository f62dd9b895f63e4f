#include "kernelhub/sigstore/internal/certificate.hpp"

#include <openssl/objects.h>
#include <openssl/x509v3.h>

#include "kernelhub/sigstore/internal/asn1_time.hpp"
#include "kernelhub/sigstore/internal/openssl_handles.hpp"

namespace kernelhub::sigstore {

namespace {

std::string dotted(const ASN1_OBJECT* object) {
  char text[128];
  const int n = OBJ_obj2txt(text, sizeof text, object, /*no_name=*/1);
  if (n <= 0 || n >= static_cast<int>(sizeof text)) return {};
  return std::string(text, static_cast<std::size_t>(n));
}

std::string asn1_text(const ASN1_STRING* s) {
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                     static_cast<std::size_t>(ASN1_STRING_length(s)));
}

int extension_index(X509* x509, std::string_view extension_oid) {
  const int count = X509_get_ext_count(x509);
  for (int i = 0; i < count; ++i) {
    if (dotted(X509_EXTENSION_get_object(X509_get_ext(x509, i))) == extension_oid) return i;
  }
  return -1;
}

std::string name_text(const X509_NAME* name) {
  UniqueBio bio(BIO_new(BIO_s_mem()));
  if (!bio || X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253) < 0) return {};
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

}  // namespace

Result<Certificate> Certificate::parse_der(std::string_view der) {
  const auto* begin = reinterpret_cast<const unsigned char*>(der.data());
  const unsigned char* p = begin;
  X509* parsed = d2i_X509(nullptr, &p, static_cast<long>(der.size()));
  if (parsed == nullptr) return unexpected(ErrorCode::kCorruptFile, "not a DER X.509 certificate");
  Certificate out;
  out.x509_ = std::shared_ptr<X509>(parsed, X509_free);
  if (p != begin + der.size()) {
    return unexpected(ErrorCode::kCorruptFile,
                      "a DER X.509 certificate followed by " + std::to_string(begin + der.size() - p) + " more bytes");
  }
  out.der_ = std::string(der);
  const auto not_before = to_instant(X509_get0_notBefore(parsed));
  const auto not_after = to_instant(X509_get0_notAfter(parsed));
  if (!not_before || !not_after)
    return unexpected(ErrorCode::kCorruptFile, "a certificate with an unreadable validity");
  out.not_before_ = *not_before;
  out.not_after_ = *not_after;
  // Computes and caches the extension flags; a certificate whose extensions do not decode is refused.
  if ((X509_get_extension_flags(parsed) & EXFLAG_INVALID) != 0) {
    return unexpected(ErrorCode::kCorruptFile, "a certificate whose extensions do not decode");
  }
  return out;
}

Result<VerificationKey> Certificate::public_key() const {
  EVP_PKEY* key = X509_get0_pubkey(x509_.get());
  if (key == nullptr) return unexpected(ErrorCode::kCorruptFile, "a certificate whose public key does not decode");
  return VerificationKey::from_pkey(key);
}

std::string Certificate::spki_der() const {
  return encoded([&](unsigned char** out) { return i2d_X509_PUBKEY(X509_get_X509_PUBKEY(x509_.get()), out); });
}

std::string Certificate::subject() const {
  return name_text(X509_get_subject_name(x509_.get()));
}

std::string Certificate::description() const {
  const auto sans = subject_alternative_names();
  if (!sans.empty()) return "the certificate for `" + sans.front() + "`";
  return "the certificate `" + subject() + "`";
}

std::string Certificate::issuer() const {
  return name_text(X509_get_issuer_name(x509_.get()));
}

bool Certificate::is_ca() const {
  return (X509_get_extension_flags(x509_.get()) & EXFLAG_CA) != 0;
}

bool Certificate::is_self_signed() const {
  return X509_self_signed(x509_.get(), /*verify_signature=*/1) == 1;
}

bool Certificate::has_digital_signature_usage() const {
  return (X509_get_extension_flags(x509_.get()) & EXFLAG_KUSAGE) != 0 &&
         (X509_get_key_usage(x509_.get()) & KU_DIGITAL_SIGNATURE) != 0;
}

bool Certificate::has_extended_key_usage(std::string_view purpose) const {
  UniqueExtendedKeyUsage usage(
      static_cast<EXTENDED_KEY_USAGE*>(X509_get_ext_d2i(x509_.get(), NID_ext_key_usage, nullptr, nullptr)));
  if (!usage) return false;
  for (int i = 0; i < sk_ASN1_OBJECT_num(usage.get()); ++i) {
    if (dotted(sk_ASN1_OBJECT_value(usage.get(), i)) == purpose) return true;
  }
  return false;
}

std::optional<std::string> Certificate::extension(std::string_view extension_oid) const {
  const int index = extension_index(x509_.get(), extension_oid);
  if (index < 0) return std::nullopt;
  return asn1_text(X509_EXTENSION_get_data(X509_get_ext(x509_.get(), index)));
}

Result<std::optional<std::string>> Certificate::utf8_extension(std::string_view extension_oid) const {
  const auto value = extension(extension_oid);
  if (!value) return std::optional<std::string>();
  const auto* begin = reinterpret_cast<const unsigned char*>(value->data());
  const unsigned char* p = begin;
  UniqueAsn1String text(d2i_ASN1_UTF8STRING(nullptr, &p, static_cast<long>(value->size())));
  if (!text || p != begin + value->size()) {
    return unexpected(ErrorCode::kBadSignature, "the certificate's extension " + std::string(extension_oid) +
                                                    " is not a DER UTF8String, as Fulcio writes it");
  }
  return std::optional<std::string>(asn1_text(text.get()));
}

std::vector<std::string> Certificate::subject_alternative_names() const {
  std::vector<std::string> out;
  UniqueGeneralNames names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(x509_.get(), NID_subject_alt_name, nullptr, nullptr)));
  if (!names) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    if (name->type == GEN_URI || name->type == GEN_EMAIL) {
      out.push_back(asn1_text(name->d.ia5));
    } else if (name->type == GEN_OTHERNAME && dotted(name->d.otherName->type_id) == oid::kOtherNameSan &&
               name->d.otherName->value->type == V_ASN1_UTF8STRING) {
      out.push_back(asn1_text(name->d.otherName->value->value.utf8string));
    }
  }
  return out;
}

Result<std::string> Certificate::tbs_without_extension(std::string_view extension_oid) const {
  UniqueX509 copy(X509_dup(x509_.get()));
  if (!copy) return unexpected(ErrorCode::kInternal, "cannot copy a certificate");
  const int index = extension_index(copy.get(), extension_oid);
  if (index >= 0) X509_EXTENSION_free(X509_delete_ext(copy.get(), index));
  std::string tbs = encoded([&](unsigned char** out) { return i2d_re_X509_tbs(copy.get(), out); });
  if (tbs.empty()) return unexpected(ErrorCode::kInternal, "cannot re-encode a certificate's TBSCertificate");
  return tbs;
}

}  // namespace kernelhub::sigstore
