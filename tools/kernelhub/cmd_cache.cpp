// kernelhub cache <command>: the kernels in the Hugging Face cache. A command group: each
// subcommand lives in cmd_cache_<name>.cpp and registers itself with KERNELHUB_SUBCOMMAND("cache", ...).
#include "command.hpp"

namespace kernelhub::cli {

namespace {

CommandRun define_cache(CLI::App& app) {
  app.description(
      "Inspect the kernels in the Hugging Face cache: the one `kernelhub get`, `download` and the\n"
      "kernels package share (KERNELS_CACHE, else HF_HUB_CACHE, else $HF_HOME/hub).");
  return define_subcommands(app, "cache");
}

}  // namespace

KERNELHUB_COMMAND("cache", "inspect the kernels in the Hugging Face cache (ls)", &define_cache);

}  // namespace kernelhub::cli
