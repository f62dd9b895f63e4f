#include "kernelhub/sigstore/internal/sct.hpp"

#include <openssl/asn1.h>

#include "kernelhub/base/internal/hex.hpp"
#include "kernelhub/sigstore/internal/openssl_handles.hpp"

namespace kernelhub::sigstore {

namespace {

constexpr std::uint8_t kSha256 = 4;
constexpr std::uint8_t kRsa = 1;
constexpr std::uint8_t kEcdsa = 3;

Error malformed(std::string what) {
  return Error{ErrorCode::kCorruptFile, "the certificate's SCT list " + std::move(what)};
}

// Reads TLS presentation-language fields from a byte string.
class TlsReader {
 public:
  explicit TlsReader(std::string_view bytes) : rest_(bytes) {}
  bool empty() const { return rest_.empty(); }
  bool number(std::size_t size, std::uint64_t& out) {
    if (rest_.size() < size) return false;
    out = 0;
    for (std::size_t i = 0; i < size; ++i) out = (out << 8) | static_cast<std::uint8_t>(rest_[i]);
    rest_.remove_prefix(size);
    return true;
  }
  bool bytes(std::size_t size, std::string_view& out) {
    if (rest_.size() < size) return false;
    out = rest_.substr(0, size);
    rest_.remove_prefix(size);
    return true;
  }
  // opaque<0..2^(8*length_size)-1>
  bool vector(std::size_t length_size, std::string_view& out) {
    std::uint64_t size = 0;
    return number(length_size, size) && bytes(size, out);
  }

 private:
  std::string_view rest_;
};

void append_number(std::string& out, std::uint64_t value, std::size_t size) {
  for (std::size_t i = size; i > 0; --i) out.push_back(static_cast<char>((value >> (8 * (i - 1))) & 0xff));
}

// The `digitally-signed` struct of an SCT over a precertificate entry (RFC 6962 section 3.2).
std::string signed_data(const SignedCertificateTimestamp& sct, std::string_view issuer_key_hash, std::string_view tbs) {
  std::string out;
  out.push_back('\x00');  // sct_version v1
  out.push_back('\x00');  // signature_type certificate_timestamp
  append_number(out, sct.timestamp_ms, 8);
  append_number(out, 1, 2);  // entry_type precert_entry
  out.append(issuer_key_hash);
  append_number(out, tbs.size(), 3);
  out.append(tbs);
  append_number(out, sct.extensions.size(), 2);
  out.append(sct.extensions);
  return out;
}

}  // namespace

Result<std::vector<SignedCertificateTimestamp>> parse_sct_list(std::string_view extension_value) {
  const auto* begin = reinterpret_cast<const unsigned char*>(extension_value.data());
  const unsigned char* p = begin;
  UniqueAsn1String octets(d2i_ASN1_OCTET_STRING(nullptr, &p, static_cast<long>(extension_value.size())));
  if (!octets || p != begin + extension_value.size()) return unexpected(malformed("is not a DER OCTET STRING"));
  TlsReader list(std::string_view(reinterpret_cast<const char*>(ASN1_STRING_get0_data(octets.get())),
                                  static_cast<std::size_t>(ASN1_STRING_length(octets.get()))));
  std::string_view items;
  if (!list.vector(2, items) || !list.empty()) return unexpected(malformed("has a wrong length"));
  std::vector<SignedCertificateTimestamp> out;
  TlsReader reader(items);
  while (!reader.empty()) {
    std::string_view item;
    if (!reader.vector(2, item)) return unexpected(malformed("has an SCT of a wrong length"));
    TlsReader sct_reader(item);
    SignedCertificateTimestamp sct;
    std::uint64_t version = 0, hash = 0, signature = 0;
    std::string_view log_id, extensions, signature_bytes;
    if (!sct_reader.number(1, version) || !sct_reader.bytes(32, log_id) || !sct_reader.number(8, sct.timestamp_ms) ||
        !sct_reader.vector(2, extensions) || !sct_reader.number(1, hash) || !sct_reader.number(1, signature) ||
        !sct_reader.vector(2, signature_bytes) || !sct_reader.empty()) {
      return unexpected(malformed("has an SCT that does not decode"));
    }
    if (version != 0) return unexpected(malformed("has an SCT of version " + std::to_string(version + 1) + ", not 1"));
    sct.log_id = std::string(log_id);
    sct.extensions = std::string(extensions);
    sct.hash_algorithm = static_cast<std::uint8_t>(hash);
    sct.signature_algorithm = static_cast<std::uint8_t>(signature);
    sct.signature = std::string(signature_bytes);
    out.push_back(std::move(sct));
  }
  return out;
}

Status verify_embedded_scts(const Certificate& leaf, const std::vector<Certificate>& issuer_path,
                            const std::vector<LogKey>& ct_logs) {
  const auto extension = leaf.extension(oid::kEmbeddedScts);
  if (!extension) {
    return unexpected(ErrorCode::kBadSignature,
                      "the signing certificate has no embedded SCT: no CT log promised to log it");
  }
  auto scts = parse_sct_list(*extension);
  if (!scts) return unexpected(ErrorCode::kBadSignature, scts.error().message);
  if (scts->empty()) return unexpected(ErrorCode::kBadSignature, "the signing certificate's SCT list is empty");
  std::size_t issuer_index = 0;
  if (!issuer_path.empty() && issuer_path[0].has_extended_key_usage(oid::kCtPrecertificateSigning)) issuer_index = 1;
  if (issuer_index >= issuer_path.size()) {
    return unexpected(ErrorCode::kBadSignature, "the signing certificate's issuer is not in its verified path");
  }
  const Certificate& issuer = issuer_path[issuer_index];
  if (!issuer.is_ca()) {
    return unexpected(ErrorCode::kBadSignature, "the signing certificate's issuer `" + issuer.subject() +
                                                    "` is not a CA, so it cannot have issued the precertificate");
  }
  const std::string issuer_key_hash = digest(HashAlgorithm::kSha256, issuer.spki_der());
  KH_ASSIGN_OR_RETURN(const std::string tbs, leaf.tbs_without_extension(oid::kEmbeddedScts));
  std::string reasons;
  for (std::size_t i = 0; i < scts->size(); ++i) {
    const auto& sct = (*scts)[i];
    const auto note = [&](const std::string& why) {
      reasons += (reasons.empty() ? "" : "; ") + std::string("SCT ") + std::to_string(i + 1) + " " + why;
    };
    const LogKey* log = find_log(ct_logs, sct.log_id);
    if (log == nullptr) {
      note("is from the CT log " + to_hex(sct.log_id) + ", which the trusted root does not list");
      continue;
    }
    const Instant when{std::chrono::milliseconds{static_cast<std::int64_t>(sct.timestamp_ms)}};
    if (!log->instance.valid_for.contains(when)) {
      note("is dated " + to_rfc3339(when) + ", outside the period the root trusts the CT log `" +
           log->instance.base_url + "` for (" + log->instance.valid_for.to_string() + ")");
      continue;
    }
    if (sct.hash_algorithm != kSha256 || (sct.signature_algorithm != kEcdsa && sct.signature_algorithm != kRsa)) {
      note("is signed with an algorithm other than ECDSA or RSA over SHA-256");
      continue;
    }
    if (!log->key ||
        !log->key->verify_message(signed_data(sct, issuer_key_hash, tbs), sct.signature, HashAlgorithm::kSha256)) {
      note("does not verify with the key of the CT log `" + log->instance.base_url + "`");
      continue;
    }
    return {};
  }
  return unexpected(ErrorCode::kBadSignature, "no SCT of the signing certificate verifies: " + reasons);
}

}  // namespace kernelhub::sigstore
