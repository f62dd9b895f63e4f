// The load stage of get_kernel, and what it needs of this process: the environment the variant
// is selected for (this LibTorch and machine), the loader's pre-flight and dlopen, and the
// Kernel it makes. get_kernel is fetch (fetch.hpp) then load; the CLI and tests call the stages.
//
// Errors are values here; raise_for() (kernelhub/fetch/internal/raise_for.hpp, in fetch/) is the one place that turns
// them into exceptions.
#pragma once

#include <memory>

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/fetch/internal/fetch.hpp"
#include "kernelhub/kernelhub.hpp"

namespace kernelhub {

// This process as variant selection sees it: its LibTorch (version, C++ ABI, CUDA/ROCm/XPU),
// the machine, the CUDA driver and GPUs (detected once per process), KERNELHUB_* overrides.
// Errors: kInvalidArgument for an override that does not parse.
Result<resolver::Environment> detect_environment(const EnvironmentSource& env = process_environment());

// Loads a fetched native variant: torch's CUDA half when the variant is a CUDA one, the loader's
// pre-flight (from fetched.image when the fetch read the library), dlopen, the ops of its
// namespace. A library already loaded in this process from the same file is not loaded again.
// `dependencies`, already loaded, stay loaded with it. Errors: those of loader::OpLibrary::open.
Result<Kernel> load_variant(FetchedVariant fetched, const EnvironmentSource& env = process_environment(),
                            std::vector<Kernel> dependencies = {});

// fetch_kernel_tree (kernel_tree.hpp; `standing_for` as there) then load_variant for each kernel,
// every dependency before the kernels that need it. Errors: those of both; a dependency's say which
// kernel needed it.
Result<Kernel> load_kernel(const FetchRequest& request, const FetchContext& ctx,
                           std::optional<KernelDependency> standing_for = std::nullopt);

// get_kernel (kernelhub.hpp) with its errors as values, in kernelhub's words with their Problem
// (fetch/problem.hpp; the CLI says them with its options, tools/common/cli_words.hpp); its
// warnings said as get_kernel says them (GetKernelOptions::on_warning). What get_kernel takes from
// the process is given: the configuration `env` (get_kernel: process_environment()) and the
// Session (none: the process's, Session::process_default(); tests and benchmarks pass one with a
// transport of their own).
Result<Kernel> get_kernel_result(std::string_view repo_id, const GetKernelOptions& options,
                                 const EnvironmentSource& env, std::shared_ptr<Session> session = nullptr);

// get_kernel_result, its errors thrown as get_kernel throws them.
Kernel get_kernel(std::string_view repo_id, const GetKernelOptions& options, const EnvironmentSource& env,
                  std::shared_ptr<Session> session = nullptr);

}  // namespace kernelhub
