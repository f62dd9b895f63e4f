// `kernelhub` lists `serve` and hands it to kernelhub-serve (torch_commands.hpp).
#include "command.hpp"
#include "torch_commands.hpp"

namespace kernelhub::cli {

KERNELHUB_SIBLING_COMMAND("serve", kServeSummary, kServerExecutable);

}  // namespace kernelhub::cli
