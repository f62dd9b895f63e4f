// The stages of tvm_ffi::get_kernel (tvm_ffi.hpp), for callers that fetch themselves (the CLI's
// `kernelhub get`, which selects among torch and tvm-ffi variants): the environment a process without
// LibTorch selects for, and the load of a fetched tvm-ffi variant. Errors are values here.
#pragma once

#include "kernelhub/base/environment_source.hpp"
#include "kernelhub/fetch/get_kernel_options.hpp"
#include "kernelhub/fetch/internal/fetch.hpp"
#include "kernelhub/tvm_ffi.hpp"
#include "kernelhub/tvm_ffi_loader/internal/runtime.hpp"

namespace kernelhub::tvm_ffi {

// This machine with no torch: uname, glibc, the CUDA driver and GPUs (once per process), the
// runtime's TVM-FFI version (none without a runtime: every tvm-ffi build is then refused for its
// version), KERNELHUB_* overrides. The backend is the machine's: CUDA of the driver's version
// where a driver sees a GPU, else cpu (KERNELHUB_BACKEND overrides it).
// Errors: kInvalidArgument for an override that does not parse.
Result<resolver::Environment> detect_environment(const tvm_ffi_loader::Runtime* runtime,
                                                 const EnvironmentSource& env = process_environment());

// The fetch get_kernel makes for `repo_id` and `options`: fetch.hpp's fetch_request, selecting
// tvm-ffi builds only.
Result<FetchRequest> fetch_request(std::string_view repo_id, const GetKernelOptions& options,
                                   const EnvironmentSource& env);

// Loads a fetched tvm-ffi variant with `runtime`. Errors: kInvalidArgument (not a tvm-ffi variant),
// kNotFound (no library), those of tvm_ffi_loader::KernelLibrary::load.
Result<Kernel> load_variant(FetchedVariant fetched, std::shared_ptr<const tvm_ffi_loader::Runtime> runtime,
                            const EnvironmentSource& env = process_environment());

}  // namespace kernelhub::tvm_ffi
