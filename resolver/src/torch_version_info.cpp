#include "kernelhub/resolver/internal/torch_version_info.hpp"

namespace kernelhub::resolver {

namespace {

Result<Version> version_of(std::string_view attribute, const std::string& text) {
  auto version = Version::parse(text);
  if (!version) return unexpected(version.error().with_context(attribute));
  return *version;
}

// torch.version.xpu is the oneAPI build date, "20250100"; kernels/backends.py reads characters
// 0-3 and 5 as 2025.1.
Result<Version> xpu_version_of(const std::string& text) {
  const bool digits = text.size() >= 6 && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "torch.version.xpu: `" + text + "` is not a oneAPI build number; expected e.g. 20250100");
  }
  return version_of("torch.version.xpu", text.substr(0, 4) + "." + text.substr(5, 1));
}

}  // namespace

bool wheels_use_cxx11_abi(const Version& torch) {
  return torch >= Version{2, 7};
}

Result<TorchRuntime> TorchVersionInfo::runtime() const {
  TorchRuntime out;
  KH_ASSIGN_OR_RETURN(out.version, version_of("torch.__version__", version));
  out.cxx11_abi = cxx11_abi;
  if (cuda) {
    KH_ASSIGN_OR_RETURN(Version v, version_of("torch.version.cuda", *cuda));
    out.backend = Backend{BackendKind::kCuda, v};
  } else if (hip) {
    // backends.py: `torch.version.rocm or torch.version.hip`, up to its first `-`.
    const bool named_rocm = rocm && !rocm->empty();
    const std::string text = (named_rocm ? *rocm : *hip).substr(0, (named_rocm ? *rocm : *hip).find('-'));
    KH_ASSIGN_OR_RETURN(Version v, version_of(named_rocm ? "torch.version.rocm" : "torch.version.hip", text));
    const std::string release = release_text(text);
    out.backend = Backend{BackendKind::kRocm, v, release == v.to_string() ? "" : release};
  } else if (xpu) {
    KH_ASSIGN_OR_RETURN(Version v, xpu_version_of(*xpu));
    out.backend = Backend{BackendKind::kXpu, v};
  }
  return out;
}

}  // namespace kernelhub::resolver
