#include "kernelhub/sigstore/internal/signed_entry_timestamp.hpp"

#include "kernelhub/base/internal/base64.hpp"
#include "kernelhub/base/internal/hex.hpp"

namespace kernelhub::sigstore {

std::string signed_entry_timestamp_payload(const TransparencyLogEntry& entry) {
  // Keys in RFC 8785 order (UTF-16 code units: all ASCII here, so byte order); base64 and hex are
  // plain ASCII needing no escape, and integers print as JSON numbers.
  return R"({"body":")" + base64_encode(entry.canonicalized_body) + R"(","integratedTime":)" +
         std::to_string(*entry.integrated_time) + R"(,"logID":")" + to_hex(entry.log_id) + R"(","logIndex":)" +
         std::to_string(entry.log_index) + "}";
}

Status verify_signed_entry_timestamp(const TransparencyLogEntry& entry, const LogKey& log) {
  const Instant integrated{std::chrono::seconds{*entry.integrated_time}};
  if (!log.instance.valid_for.contains(integrated)) {
    return unexpected(ErrorCode::kBadSignature, "the log entry's integrated time, " + to_rfc3339(integrated) +
                                                    ", is outside the period the trusted root trusts the log `" +
                                                    log.instance.base_url + "` for (" +
                                                    log.instance.valid_for.to_string() + ")");
  }
  if (!log.key) {
    return unexpected(ErrorCode::kBadSignature, "the log `" + log.instance.base_url + "` has a `" +
                                                    log.instance.key_details + "` key, which this library cannot use");
  }
  if (!log.key->verify_message(signed_entry_timestamp_payload(entry), *entry.signed_entry_timestamp,
                               log.key->default_hash())) {
    return unexpected(ErrorCode::kBadSignature,
                      "the log entry's inclusion promise (signed entry timestamp) does "
                      "not verify with the key of the log `" +
                          log.instance.base_url + "`");
  }
  return {};
}

}  // namespace kernelhub::sigstore
