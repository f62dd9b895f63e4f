// The commands that load LibTorch. The `kernelhub` executable links only torch-free layers
// (fetch and below, the server), so that its other commands start quickly and run where torch is
// not installed; it runs these by exec'ing `kernelhub-get`, installed next to it and linked with
// kernelhub::kernelhub, with the same arguments (main.cpp). Each is defined once, in
// kernelhub-get/cmd_<name>.cpp; `kernelhub` lists it with the summary below.
#pragma once

#include <string_view>

namespace kernelhub::cli {

inline constexpr std::string_view kTorchExecutable = "kernelhub-get";

inline constexpr std::string_view kGetSummary = "resolve, verify and load a kernel, and list its ops";

}  // namespace kernelhub::cli
