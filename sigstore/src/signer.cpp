#include "kernelhub/sigstore/signer.hpp"

#include "kernelhub/sigstore/internal/certificate.hpp"
#include "kernelhub/sigstore/internal/openssl_handles.hpp"
#include "kernelhub/sigstore/internal/signer_of.hpp"

namespace kernelhub::sigstore {

Result<Signer> signer_of(const Certificate& certificate) {
  CertificateIdentity identity;
  identity.subject_alternative_names = certificate.subject_alternative_names();
  identity.issuer_v1 = certificate.extension(oid::kIssuerV1);
  KH_ASSIGN_OR_RETURN(identity.issuer_v2, certificate.utf8_extension(oid::kIssuerV2));
  KH_ASSIGN_OR_RETURN(identity.build_signer_uri, certificate.utf8_extension(oid::kBuildSignerUri));
  KH_ASSIGN_OR_RETURN(identity.build_signer_digest, certificate.utf8_extension(oid::kBuildSignerDigest));
  KH_ASSIGN_OR_RETURN(identity.source_repository_uri, certificate.utf8_extension(oid::kSourceRepositoryUri));
  KH_ASSIGN_OR_RETURN(identity.source_repository_digest, certificate.utf8_extension(oid::kSourceRepositoryDigest));
  KH_ASSIGN_OR_RETURN(identity.source_repository_ref, certificate.utf8_extension(oid::kSourceRepositoryRef));
  identity.certificate_der = certificate.der();
  return Signer{std::move(identity)};
}

Signer signer_of(const VerificationKey& key) {
  return Signer{KeyIdentity{key.spki_der(), key.fingerprint()}};
}

Result<Signer> Signer::from_certificate_der(std::string_view der) {
  const ClearOpensslErrorsOnExit clear_errors;
  KH_ASSIGN_OR_RETURN(auto certificate, Certificate::parse_der(der));
  return signer_of(certificate);
}

Result<Signer> Signer::from_public_key_pem(std::string_view pem) {
  const ClearOpensslErrorsOnExit clear_errors;
  KH_ASSIGN_OR_RETURN(auto key, VerificationKey::from_pem(pem));
  return signer_of(key);
}

std::string Signer::describe() const {
  if (const auto* key = std::get_if<KeyIdentity>(&identity)) return "key sha256:" + key->fingerprint;
  const auto& certificate = std::get<CertificateIdentity>(identity);
  return "certificate for " + (certificate.subject_alternative_names.empty()
                                   ? std::string("(no subject alternative name)")
                                   : certificate.subject_alternative_names.front());
}

}  // namespace kernelhub::sigstore
