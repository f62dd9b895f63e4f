// `kernelhub` lists the commands that load LibTorch and hands them to kernelhub-get
// (torch_commands.hpp).
#include "torch_commands.hpp"
#include "command.hpp"

namespace kernelhub::cli {

KERNELHUB_TORCH_COMMAND("get", kGetSummary, kTorchExecutable);

}  // namespace kernelhub::cli
