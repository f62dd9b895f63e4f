// EnvVars: every environment variable the client layer reads, in one place, each with its
// default. Only Settings::from_env reads them (through an EnvironmentSource); nothing else in
// the client looks at the environment. Names and fallback chains mirror huggingface_hub
// `constants.py` @ee0a451.
//
// Thread safety: constants only.
#pragma once

#include <string_view>

namespace kernelhub::client::env_vars {

// Root of all Hugging Face state. Default: $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface.
inline constexpr std::string_view kHfHome = "HF_HOME";
inline constexpr std::string_view kXdgCacheHome = "XDG_CACHE_HOME";
inline constexpr std::string_view kHome = "HOME";
// The hub cache. Default: $HUGGINGFACE_HUB_CACHE (legacy), else $HF_HOME/hub.
inline constexpr std::string_view kHfHubCache = "HF_HUB_CACHE";
inline constexpr std::string_view kHuggingfaceHubCache = "HUGGINGFACE_HUB_CACHE";
// The `kernels` package's cache override for kernel repos. Default: the hub cache.
inline constexpr std::string_view kKernelsCache = "KERNELS_CACHE";
// The Hub. Default: https://huggingface.co (trailing `/` stripped).
inline constexpr std::string_view kHfEndpoint = "HF_ENDPOINT";
// Token: $HF_TOKEN, else $HUGGING_FACE_HUB_TOKEN, else the file $HF_TOKEN_PATH (default
// $HF_HOME/token). HF_HUB_DISABLE_IMPLICIT_TOKEN (truthy) turns all of them off.
inline constexpr std::string_view kHfToken = "HF_TOKEN";
inline constexpr std::string_view kHuggingFaceHubToken = "HUGGING_FACE_HUB_TOKEN";
inline constexpr std::string_view kHfTokenPath = "HF_TOKEN_PATH";
inline constexpr std::string_view kHfHubDisableImplicitToken = "HF_HUB_DISABLE_IMPLICIT_TOKEN";
// No network at all (truthy: 1/ON/YES/TRUE). TRANSFORMERS_OFFLINE is the legacy spelling.
inline constexpr std::string_view kHfHubOffline = "HF_HUB_OFFLINE";
inline constexpr std::string_view kTransformersOffline = "TRANSFORMERS_OFFLINE";
// Telemetry (user-agent details) off. Any of the three, truthy.
inline constexpr std::string_view kHfHubDisableTelemetry = "HF_HUB_DISABLE_TELEMETRY";
inline constexpr std::string_view kDisableTelemetry = "DISABLE_TELEMETRY";
inline constexpr std::string_view kDoNotTrack = "DO_NOT_TRACK";
// Seconds. Metadata/API timeout (default 10) and download read timeout (default 10).
inline constexpr std::string_view kHfHubEtagTimeout = "HF_HUB_ETAG_TIMEOUT";
inline constexpr std::string_view kHfHubDownloadTimeout = "HF_HUB_DOWNLOAD_TIMEOUT";
// Appended to the user agent as `origin/<value>`.
inline constexpr std::string_view kHfHubUserAgentOrigin = "HF_HUB_USER_AGENT_ORIGIN";
// Ours: parallel file downloads (default 8) and connect timeout in seconds (default 10).
inline constexpr std::string_view kKernelhubMaxParallel = "KERNELHUB_MAX_PARALLEL";
inline constexpr std::string_view kKernelhubConnectTimeout = "KERNELHUB_CONNECT_TIMEOUT";
// Ours: fsync each blob before it becomes visible (default on; "0"/"off"/"no"/"false" turn it off).
inline constexpr std::string_view kKernelhubFsync = "KERNELHUB_FSYNC";
// Ours: threads that hash downloads beside the transfer (default: half the cores, at most 4,
// none below 4 cores; 0 hashes on the transfer thread).
inline constexpr std::string_view kKernelhubHashThreads = "KERNELHUB_HASH_THREADS";
inline constexpr std::string_view kKernelhubTransferThreads = "KERNELHUB_TRANSFER_THREADS";

}  // namespace kernelhub::client::env_vars
