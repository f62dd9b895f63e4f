// The commands another executable runs. The `kernelhub` executable links only torch-free layers
// (fetch and below, the tvm-ffi loader), so that its other commands start quickly and run where
// torch is not installed; it runs these by exec'ing the executable installed next to it, with the
// same arguments (main.cpp), and lists each with the summary below:
//   kernelhub-get    the commands that load LibTorch (linked with kernelhub::kernelhub), each
//                    defined once, in kernelhub-get/cmd_<name>.cpp;
//   kernelhub-serve  `serve` (cmd_serve.cpp, linked with the server and its HTTP library: a
//                    shared cpp-httplib and the OpenSSL it starts when loaded, which every other
//                    command would pay for at start, bench/client/TORCH_FREE_GET.md).
#pragma once

#include <string_view>

namespace kernelhub::cli {

inline constexpr std::string_view kTorchExecutable = "kernelhub-get";

inline constexpr std::string_view kGetSummary = "resolve, verify and load a kernel, and list its ops";

inline constexpr std::string_view kServerExecutable = "kernelhub-serve";

inline constexpr std::string_view kServeSummary = "run a Hub-compatible server for kernel and model repos";

}  // namespace kernelhub::cli
