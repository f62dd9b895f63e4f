// HubUploader::upload_lfs: the git-lfs batch API as huggingface_hub's lfs.py uses it without Xet
// (lfs.py). Objects the server already has come back without actions and are not
// sent again, which is what makes an interrupted publish resumable.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "kernelhub/client/internal/upload.hpp"
#include "upload_call.hpp"

namespace kernelhub::client {

namespace {

using nlohmann::json;

const char* const kLfsJson = "application/vnd.git-lfs+json";

bool all_digits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string strip_quotes(std::string text) {
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') text = text.substr(1, text.size() - 2);
  return text;
}

Status put_basic(const UploadCall& call, const UploadFile& file, const std::string& href,
                 const std::function<void(std::uint64_t)>& on_bytes) {
  KH_ASSIGN_OR_RETURN(auto answer,
                      call.storage("PUT", href, "", FileSlice{file.local, 0, file.size}, {},
                                   "uploading `" + file.path_in_repo + "` (" + std::to_string(file.size) + " bytes)"));
  (void)answer;
  if (on_bytes) on_bytes(file.size);
  return {};
}

Status put_multipart(const UploadCall& call, const UploadFile& file, const json& upload,
                     const std::function<void(std::uint64_t)>& on_bytes) {
  const json& header = upload["header"];
  std::uint64_t chunk = 0;
  try {
    chunk = header["chunk_size"].is_string() ? std::stoull(header["chunk_size"].get<std::string>())
                                             : header["chunk_size"].get<std::uint64_t>();
  } catch (const std::exception&) {
    return unexpected(ErrorCode::kNetwork,
                      "the LFS batch answer has a malformed `chunk_size` for `" + file.path_in_repo + "`");
  }
  std::vector<std::pair<std::uint64_t, std::string>> parts;
  for (const auto& [key, value] : header.items()) {
    if (all_digits(key) && key.size() <= 9 && value.is_string())
      parts.emplace_back(std::stoull(key), value.get<std::string>());
  }
  std::sort(parts.begin(), parts.end());
  const std::uint64_t expected = chunk == 0 ? 0 : (file.size + chunk - 1) / chunk;
  if (chunk == 0 || parts.size() != expected) {
    return unexpected(ErrorCode::kNetwork, "the LFS batch answer for `" + file.path_in_repo + "` has " +
                                               std::to_string(parts.size()) + " part URLs, expected " +
                                               std::to_string(expected));
  }
  json completion = {{"oid", file.sha256}, {"parts", json::array()}};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::uint64_t offset = chunk * i;
    const std::uint64_t length = std::min(chunk, file.size - offset);
    const std::string doing = "uploading part " + std::to_string(i + 1) + "/" + std::to_string(parts.size()) + " of `" +
                              file.path_in_repo + "`";
    KH_ASSIGN_OR_RETURN(auto answer,
                        call.storage("PUT", parts[i].second, "", FileSlice{file.local, offset, length}, {}, doing));
    const std::string* etag = answer.response.header("etag");
    if (!etag) return unexpected(ErrorCode::kNetwork, "no ETag in the answer to " + doing);
    completion["parts"].push_back({{"partNumber", i + 1}, {"etag", strip_quotes(*etag)}});
    if (on_bytes) on_bytes(length);
  }
  KH_ASSIGN_OR_RETURN(auto done, call.storage("POST", upload["href"].get<std::string>(), completion.dump(),
                                              std::nullopt, {{"Content-Type", kLfsJson}, {"Accept", kLfsJson}},
                                              "completing the multipart upload of `" + file.path_in_repo + "`"));
  (void)done;
  return {};
}

}  // namespace

Result<LfsUploadStats> HubUploader::upload_lfs(const RepoId& repo, RepoType type, const std::string& revision,
                                               const std::vector<const UploadFile*>& files,
                                               const std::function<void(std::uint64_t)>& on_bytes) const {
  UploadCall call{settings_, *transport_};
  // One object per content: two paths with the same bytes are sent once. Small ones first, so a
  // cut late in a big file leaves as much as possible stored for the next run.
  std::map<std::string, const UploadFile*> by_oid;
  for (const UploadFile* f : files) by_oid.emplace(f->sha256, f);
  std::vector<const UploadFile*> objects;
  for (const auto& [oid, f] : by_oid) objects.push_back(f);
  std::stable_sort(objects.begin(), objects.end(), [](auto* a, auto* b) { return a->size < b->size; });

  LfsUploadStats stats;
  const std::string batch_url = web_base(settings_, repo, type) + ".git/info/lfs/objects/batch";
  for (std::size_t start = 0; start < objects.size(); start += 256) {
    const std::size_t end = std::min(objects.size(), start + 256);
    json list = json::array();
    for (std::size_t i = start; i < end; ++i) list.push_back({{"oid", objects[i]->sha256}, {"size", objects[i]->size}});
    const json body = {{"operation", "upload"},
                       {"transfers", {"basic", "multipart"}},
                       {"objects", list},
                       {"hash_algo", "sha256"},
                       {"ref", {{"name", revision}}}};
    KH_ASSIGN_OR_RETURN(auto answer,
                        call.api("POST", batch_url, body.dump(), kLfsJson, "asking where to upload (LFS batch)", true,
                                 false, {{"Accept", kLfsJson}}));
    const json doc = json::parse(answer.body, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("objects") || !doc["objects"].is_array()) {
      return unexpected(ErrorCode::kNetwork,
                        "the LFS batch answer has no `objects` list: " + answer.body.substr(0, 200));
    }
    // Every refusal is reported together, before any byte is sent.
    std::string refused;
    std::vector<std::pair<const UploadFile*, json>> to_send;
    for (const auto& o : doc["objects"]) {
      const std::string oid =
          o.is_object() && o.contains("oid") && o["oid"].is_string() ? o["oid"].get<std::string>() : "";
      auto it = by_oid.find(oid);
      if (it == by_oid.end()) continue;
      if (o.contains("error")) {
        const json& error = o["error"];
        const bool has_message = error.is_object() && error.contains("message") && error["message"].is_string();
        refused += "\n  `" + it->second->path_in_repo + "` (" + std::to_string(it->second->size) +
                   " bytes): " + (has_message ? error["message"].get<std::string>() : error.dump());
        continue;
      }
      if (!o.contains("actions") || !o["actions"].is_object() || !o["actions"].contains("upload")) {
        ++stats.objects_present;
        if (on_bytes) on_bytes(it->second->size);
        continue;
      }
      to_send.emplace_back(it->second, o["actions"]);
    }
    if (!refused.empty()) {
      return unexpected(ErrorCode::kInvalidArgument, "the Hub refused these files; nothing was committed:" + refused);
    }
    for (const auto& [file, actions] : to_send) {
      const json& upload = actions["upload"];
      if (!upload.is_object() || !upload.contains("href") || !upload["href"].is_string()) {
        return unexpected(ErrorCode::kNetwork,
                          "the LFS batch answer for `" + file->path_in_repo + "` has no upload href");
      }
      const bool multipart =
          upload.contains("header") && upload["header"].is_object() && upload["header"].contains("chunk_size");
      if (multipart) {
        KH_RETURN_IF_ERROR(put_multipart(call, *file, upload, on_bytes));
        ++stats.multipart_objects;
      } else {
        KH_RETURN_IF_ERROR(put_basic(call, *file, upload["href"].get<std::string>(), on_bytes));
      }
      ++stats.objects_sent;
      stats.bytes_sent += file->size;
      if (actions.contains("verify") && actions["verify"].is_object() && actions["verify"].contains("href") &&
          actions["verify"]["href"].is_string()) {
        const json verify = {{"oid", file->sha256}, {"size", file->size}};
        KH_ASSIGN_OR_RETURN(auto verified, call.api("POST", actions["verify"]["href"].get<std::string>(), verify.dump(),
                                                    kLfsJson, "verifying the upload of `" + file->path_in_repo + "`",
                                                    true, false, {{"Accept", kLfsJson}}));
        (void)verified;
      }
    }
  }
  return stats;
}

}  // namespace kernelhub::client
