// `kernelhub` lists the commands that load LibTorch and hands them to kernelhub-get
// (torch_commands.hpp). `serve` and kernelhub-serve: server_command.cpp.
#include "torch_commands.hpp"
#include "command.hpp"

namespace kernelhub::cli {

// With the tvm-ffi loader, `get` is defined here (cmd_get.cpp) and execs kernelhub-get for torch builds.
#if !defined(KERNELHUB_WITH_TVM_FFI)
KERNELHUB_SIBLING_COMMAND("get", kGetSummary, kTorchExecutable);
#endif

}  // namespace kernelhub::cli
