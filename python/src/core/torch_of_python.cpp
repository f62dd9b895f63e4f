#include "torch_of_python.hpp"

namespace kernelhub::python {

namespace {

Result<resolver::Version> version_of(std::string_view attribute, const std::string& text) {
  auto version = resolver::Version::parse(text);
  if (!version) return unexpected(version.error().with_context(attribute));
  return *version;
}

// torch.version.xpu is the oneAPI build date, "20250100"; kernels reads it as 2025.1.
Result<resolver::Version> xpu_version_of(const std::string& text) {
  const bool digits = text.size() >= 6 && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits) {
    return unexpected(ErrorCode::kInvalidArgument,
                      "torch.version.xpu: `" + text + "` is not a oneAPI build number; expected e.g. 20250100");
  }
  return version_of("torch.version.xpu", text.substr(0, 4) + "." + text.substr(5, 1));
}

}  // namespace

Result<resolver::TorchRuntime> torch_runtime_of(const PythonTorch& torch) {
  resolver::TorchRuntime out;
  if (torch.version) {
    KH_ASSIGN_OR_RETURN(out.version, version_of("torch.__version__", *torch.version));
  }
  out.cxx11_abi = torch.cxx11_abi;
  if (torch.cuda) {
    KH_ASSIGN_OR_RETURN(resolver::Version cuda, version_of("torch.version.cuda", *torch.cuda));
    out.backend = resolver::Backend{resolver::BackendKind::kCuda, cuda};
  } else if (torch.hip) {
    KH_ASSIGN_OR_RETURN(resolver::Version rocm, version_of("torch.version.hip", *torch.hip));
    out.backend = resolver::Backend{resolver::BackendKind::kRocm, rocm};
  } else if (torch.xpu) {
    KH_ASSIGN_OR_RETURN(resolver::Version xpu, xpu_version_of(*torch.xpu));
    out.backend = resolver::Backend{resolver::BackendKind::kXpu, xpu};
  }
  return out;
}

}  // namespace kernelhub::python
