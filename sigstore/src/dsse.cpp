#include "kernelhub/sigstore/internal/dsse.hpp"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "kernelhub/sigstore/internal/protobuf_json.hpp"

namespace kernelhub::sigstore {

namespace pj = protobuf_json;
using nlohmann::json;

std::string pre_authentication_encoding(std::string_view payload_type, std::string_view payload) {
  std::string out = "DSSEv1 " + std::to_string(payload_type.size()) + " ";
  out.append(payload_type);
  out += " " + std::to_string(payload.size()) + " ";
  out.append(payload);
  return out;
}

Result<std::vector<InTotoSubject>> in_toto_subjects(std::string_view statement) {
  KH_ASSIGN_OR_RETURN(const json root, pj::parse_object(statement, "in-toto statement"));
  constexpr std::string_view kPath = "in-toto statement";
  KH_ASSIGN_OR_RETURN(auto type, pj::string(pj::field(root, kPath, "_type")));
  if (type != "https://in-toto.io/Statement/v1" && type != "https://in-toto.io/Statement/v0.1") {
    return unexpected(pj::corrupt(std::string(kPath) + "._type", "is `" + type + "`, not an in-toto statement"));
  }
  const auto subjects_field = pj::field(root, kPath, "subject");
  KH_ASSIGN_OR_RETURN(const json* subjects, pj::nonempty_array(subjects_field, "the statement is about nothing"));
  std::vector<InTotoSubject> out;
  for (std::size_t i = 0; i < subjects->size(); ++i) {
    const auto subject_field = pj::element(*subjects, subjects_field.path, i);
    KH_ASSIGN_OR_RETURN(const json* subject, pj::object(subject_field));
    InTotoSubject s;
    KH_ASSIGN_OR_RETURN(auto name, pj::optional_string(pj::field(*subject, subject_field.path, "name")));
    s.name = name.value_or("");
    const auto digest_field = pj::field(*subject, subject_field.path, "digest");
    KH_ASSIGN_OR_RETURN(const json* digest, pj::object(digest_field));
    KH_ASSIGN_OR_RETURN(auto sha256, pj::optional_string(pj::field(*digest, digest_field.path, "sha256")));
    s.sha256 = sha256.value_or("");
    std::transform(s.sha256.begin(), s.sha256.end(), s.sha256.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace kernelhub::sigstore
