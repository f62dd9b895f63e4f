// What `kernelhub get` takes, and the parts of its output that do not depend on the kind of kernel:
// shared by kernelhub-get (torch builds, LibTorch) and the torch-free `kernelhub get` (tvm-ffi builds,
// cmd_get.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "kernelhub/fetch/get_kernel_options.hpp"
#include "kernelhub/fetch/internal/fetch.hpp"

namespace kernelhub::cli {

struct GetArguments {
  std::string repo;
  GetKernelOptions options;
  std::optional<std::string> lockfile;
  bool json = false;
};

// The description, ORG/NAME and the options every `get` has.
void add_get_options(CLI::App& app, GetArguments& args);

// GetKernelOptions with --lockfile applied.
GetKernelOptions get_kernel_options(const GetArguments& args);

// {"requests", "bytes_hashed", "bytes_read", "seconds": {total, resolve, download, verify, load}}:
// where a load's time and reads went. `read_before`: bytes_read_by_process() at the start.
nlohmann::json load_statistics_json(const LoadTimings& timings, double total_ms,
                                    std::optional<std::uint64_t> read_before);

// "kernel: ...\nvariant: ...\nrevision: ...\npath: ...\n" (`variant` as it should be shown).
std::string kernel_header_text(const std::string& repo, const std::string& variant, const std::string& revision,
                               const std::filesystem::path& path);

// The same as text: "timings: resolve ... ms, ...\nloaded in: ... ms\n".
std::string load_statistics_text(const LoadTimings& timings, double total_ms);

}  // namespace kernelhub::cli
