#include "kernelhub/resolver/cuda_target.hpp"

#include <cassert>
#include <charconv>

namespace kernelhub::resolver {

namespace {

constexpr int kMaxSm = 999;  // three digits: sm_100 … sm_121 today

// A run of 1..3 decimal digits that is the whole of `text`, without leading zeros (so that
// to_string() prints back what parse() read); none otherwise.
std::optional<int> small_number(std::string_view text) {
  if (text.empty() || text.size() > 3 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

// Splits a trailing `a` or `f` off `text`.
CudaArchSuffix take_suffix(std::string_view& text) {
  if (!text.empty() && (text.back() == 'a' || text.back() == 'f')) {
    const CudaArchSuffix s = text.back() == 'a' ? CudaArchSuffix::kArchSpecific : CudaArchSuffix::kFamily;
    text.remove_suffix(1);
    return s;
  }
  return CudaArchSuffix::kNone;
}

Unexpected bad_target(std::string_view text) {
  return unexpected(ErrorCode::kInvalidArgument,
                    "`" + std::string(text) + "` is not a CUDA target; expected sm_<SM>[a|f] or compute_<SM>[a|f], "
                    "e.g. sm_90a");
}

Unexpected bad_arch(std::string_view text) {
  return unexpected(ErrorCode::kInvalidArgument,
                    "`" + std::string(text) +
                        "` is not a CUDA arch; expected MAJOR.MINOR[a|f][+PTX] as in metadata.json backend.archs, "
                        "e.g. 9.0+PTX");
}

}  // namespace

CudaTarget CudaTarget::from_sm(CudaCodeKind kind, int sm, CudaArchSuffix suffix) {
  assert(sm >= 10);
  return CudaTarget{kind, ComputeCapability{sm / 10, sm % 10}, suffix, std::nullopt};
}

Result<CudaTarget> CudaTarget::parse(std::string_view text) {
  std::string_view rest = text;
  CudaCodeKind kind;
  if (rest.starts_with("sm_")) {
    kind = CudaCodeKind::kSass;
    rest.remove_prefix(3);
  } else if (rest.starts_with("compute_")) {
    kind = CudaCodeKind::kPtx;
    rest.remove_prefix(8);
  } else {
    return bad_target(text);
  }
  const CudaArchSuffix suffix = take_suffix(rest);
  const auto sm = small_number(rest);
  if (!sm || *sm < 10 || *sm > kMaxSm) return bad_target(text);
  return from_sm(kind, *sm, suffix);
}

std::string CudaTarget::to_string() const {
  std::string out = kind == CudaCodeKind::kSass ? "sm_" : "compute_";
  out += std::to_string(sm());
  if (suffix == CudaArchSuffix::kArchSpecific) out += 'a';
  if (suffix == CudaArchSuffix::kFamily) out += 'f';
  return out;
}

Result<std::vector<CudaTarget>> parse_cuda_arch(std::string_view entry) {
  if (entry.starts_with("sm_") || entry.starts_with("compute_")) {
    KH_ASSIGN_OR_RETURN(CudaTarget t, CudaTarget::parse(entry));
    return std::vector<CudaTarget>{t};
  }
  std::string_view rest = entry;
  bool ptx = false;
  if (rest.ends_with("+PTX") || rest.ends_with("+ptx")) {
    ptx = true;
    rest.remove_suffix(4);
  }
  const CudaArchSuffix suffix = take_suffix(rest);
  const std::size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return bad_arch(entry);
  const auto major = small_number(rest.substr(0, dot));
  const auto minor = small_number(rest.substr(dot + 1));
  // The minor is one digit: the SM number is major * 10 + minor.
  if (!major || !minor || *major < 1 || *major > kMaxSm / 10 || *minor > 9 || rest.size() - dot != 2) {
    return bad_arch(entry);
  }
  const int sm = *major * 10 + *minor;
  std::vector<CudaTarget> out{CudaTarget::from_sm(CudaCodeKind::kSass, sm, suffix)};
  if (ptx) out.push_back(CudaTarget::from_sm(CudaCodeKind::kPtx, sm, suffix));
  return out;
}

Result<std::vector<CudaTarget>> parse_cuda_archs(const std::vector<std::string>& entries) {
  std::vector<CudaTarget> out;
  for (const auto& entry : entries) {
    KH_ASSIGN_OR_RETURN(std::vector<CudaTarget> targets, parse_cuda_arch(entry));
    out.insert(out.end(), targets.begin(), targets.end());
  }
  return out;
}

}  // namespace kernelhub::resolver
