// Every environment variable kernelhub reads, C++ and the Python package alike: one table, and a
// named constant for each name. Code refers to a variable only through its constant; an
// EnvironmentSource (environment_source.hpp) holds the values of exactly these names and refuses
// any other, so a variable cannot be read without being listed here. docs/ENVIRONMENT.md is
// printed from this table (`kernelhub env --variables --markdown`) and a test keeps the two equal.
// Names and fallback chains of the Hugging Face variables mirror huggingface_hub `constants.py`
// @ee0a451 and the kernels package 0.19.1.
//
// Thread safety: constants only.
#pragma once

#include <span>
#include <string_view>

namespace kernelhub {

struct EnvironmentVariable {
  std::string_view name;
  std::string_view meaning;
  std::string_view default_value;  // what holds while it is unset (or empty)
  std::string_view read_by;        // the layers that read it, e.g. "client, fetch"
  bool secret = false;             // its value is never printed (`kernelhub env --variables`)
};

// The table, in the order docs/ENVIRONMENT.md lists it (grouped by what reads them).
std::span<const EnvironmentVariable> environment_variables();

// The entry of `name`; null when kernelhub reads no variable of that name.
const EnvironmentVariable* find_environment_variable(std::string_view name);

namespace env_vars {

// The Hugging Face cache and Hub (client).
inline constexpr std::string_view kHfHome = "HF_HOME";
inline constexpr std::string_view kXdgCacheHome = "XDG_CACHE_HOME";
inline constexpr std::string_view kHome = "HOME";
inline constexpr std::string_view kHfHubCache = "HF_HUB_CACHE";
inline constexpr std::string_view kHuggingfaceHubCache = "HUGGINGFACE_HUB_CACHE";
inline constexpr std::string_view kKernelsCache = "KERNELS_CACHE";
inline constexpr std::string_view kHfEndpoint = "HF_ENDPOINT";
inline constexpr std::string_view kHfToken = "HF_TOKEN";
inline constexpr std::string_view kHuggingFaceHubToken = "HUGGING_FACE_HUB_TOKEN";
inline constexpr std::string_view kHfTokenPath = "HF_TOKEN_PATH";
inline constexpr std::string_view kHfHubDisableImplicitToken = "HF_HUB_DISABLE_IMPLICIT_TOKEN";
inline constexpr std::string_view kHfHubOffline = "HF_HUB_OFFLINE";
inline constexpr std::string_view kTransformersOffline = "TRANSFORMERS_OFFLINE";
inline constexpr std::string_view kHfHubDisableTelemetry = "HF_HUB_DISABLE_TELEMETRY";
inline constexpr std::string_view kDisableTelemetry = "DISABLE_TELEMETRY";
inline constexpr std::string_view kDoNotTrack = "DO_NOT_TRACK";
inline constexpr std::string_view kHfHubEtagTimeout = "HF_HUB_ETAG_TIMEOUT";
inline constexpr std::string_view kHfHubDownloadTimeout = "HF_HUB_DOWNLOAD_TIMEOUT";
inline constexpr std::string_view kHfHubUserAgentOrigin = "HF_HUB_USER_AGENT_ORIGIN";
inline constexpr std::string_view kKernelhubMaxParallel = "KERNELHUB_MAX_PARALLEL";
inline constexpr std::string_view kKernelhubConnectTimeout = "KERNELHUB_CONNECT_TIMEOUT";
inline constexpr std::string_view kKernelhubFsync = "KERNELHUB_FSYNC";
inline constexpr std::string_view kKernelhubHashThreads = "KERNELHUB_HASH_THREADS";
inline constexpr std::string_view kKernelhubTransferThreads = "KERNELHUB_TRANSFER_THREADS";

// What kernels loads and trusts (fetch).
inline constexpr std::string_view kLocalKernels = "LOCAL_KERNELS";
inline constexpr std::string_view kUnstableKernelsAllLatest = "UNSTABLE_KERNELS_ALL_LATEST";
inline constexpr std::string_view kKernelhubTrusted = "KERNELHUB_TRUSTED";
inline constexpr std::string_view kKernelhubStateDir = "KERNELHUB_STATE_DIR";
inline constexpr std::string_view kXdgStateHome = "XDG_STATE_HOME";

// Signatures (signing).
inline constexpr std::string_view kKernelhubTrustedKeys = "KERNELHUB_TRUSTED_KEYS";
inline constexpr std::string_view kKernelhubRequireSignature = "KERNELHUB_REQUIRE_SIGNATURE";
inline constexpr std::string_view kKernelhubSigners = "KERNELHUB_SIGNERS";
inline constexpr std::string_view kXdgConfigHome = "XDG_CONFIG_HOME";

// Sigstore bundles (sigstore).
inline constexpr std::string_view kKernelhubSigstoreTrustedRoot = "KERNELHUB_SIGSTORE_TRUSTED_ROOT";

// The machine, as variant selection sees it: overrides (resolver).
inline constexpr std::string_view kKernelhubOs = "KERNELHUB_OS";
inline constexpr std::string_view kKernelhubCpu = "KERNELHUB_CPU";
inline constexpr std::string_view kKernelhubGlibc = "KERNELHUB_GLIBC";
inline constexpr std::string_view kKernelhubTorch = "KERNELHUB_TORCH";
inline constexpr std::string_view kKernelhubCxx11Abi = "KERNELHUB_CXX11_ABI";
inline constexpr std::string_view kKernelhubBackend = "KERNELHUB_BACKEND";
inline constexpr std::string_view kKernelhubCudaDriver = "KERNELHUB_CUDA_DRIVER";
inline constexpr std::string_view kKernelhubGpus = "KERNELHUB_GPUS";
inline constexpr std::string_view kKernelhubPython = "KERNELHUB_PYTHON";
inline constexpr std::string_view kKernelhubTvmFfi = "KERNELHUB_TVM_FFI";
inline constexpr std::string_view kKernelhubMlx = "KERNELHUB_MLX";
inline constexpr std::string_view kKernelhubMacos = "KERNELHUB_MACOS";
inline constexpr std::string_view kCudaVisibleDevices = "CUDA_VISIBLE_DEVICES";

// The Python environment a process without LibTorch selects for (resolver).
inline constexpr std::string_view kVirtualEnv = "VIRTUAL_ENV";
inline constexpr std::string_view kPath = "PATH";
inline constexpr std::string_view kPythonNoUserSite = "PYTHONNOUSERSITE";

// Loading (loader, tvm_ffi_loader).
inline constexpr std::string_view kLdLibraryPath = "LD_LIBRARY_PATH";
inline constexpr std::string_view kKernelhubTvmFfiLibrary = "KERNELHUB_TVM_FFI_LIBRARY";

// The Python package (python/src/kernelhub/_environment.py).
inline constexpr std::string_view kHfHubDisableProgressBars = "HF_HUB_DISABLE_PROGRESS_BARS";

}  // namespace env_vars

}  // namespace kernelhub
