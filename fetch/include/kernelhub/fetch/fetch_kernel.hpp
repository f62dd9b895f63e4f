// fetch_kernel: get_kernel without the load, for a C++ program that links no LibTorch (kernelhub::fetch)
// and loads kernels itself, or only puts them in the cache for another process.
//
//   // This machine (os, cpu, glibc, CUDA driver, GPUs; KERNELHUB_* overrides), for a process
//   // without torch that will load tvm-ffi builds with a TVM-FFI 0.1 runtime.
//   auto environment = kernelhub::resolver::Environment::detect({}, kernelhub::process_environment());
//   if (!environment) { /* environment.error().message: an override that does not parse */ }
//   environment->tvm_ffi = kernelhub::resolver::Version{0, 1};
//   const kernelhub::FetchedKernel kernel = kernelhub::fetch_kernel(
//       "org/name", *environment, kernelhub::resolver::Loadable::torch_free_process(), {.version = 1});
//   // kernel.path(): the verified variant directory in the Hugging Face cache
//
// The variant is chosen, downloaded and verified exactly as get_kernel (kernelhub.hpp) chooses,
// downloads and verifies it (the same options, cache, lock files, publisher trust, signatures and
// LOCAL_KERNELS), among the variants `loadable` can load on `environment`; the kernels its
// metadata.json `kernel-depends` names are not fetched (FetchedKernel::metadata() lists them).
// Configuration comes from the environment (LOCAL_KERNELS, KERNELHUB_*, HF_*), read once per call.
//
// Errors are the exceptions of errors.hpp, as get_kernel throws them. May be called from several
// threads.
#pragma once

#include <string_view>

#include "kernelhub/fetch/errors.hpp"
#include "kernelhub/fetch/fetched_kernel.hpp"
#include "kernelhub/fetch/get_kernel_options.hpp"
#include "kernelhub/resolver/environment.hpp"
#include "kernelhub/resolver/loadable.hpp"

namespace kernelhub {

// Downloads and verifies the variant of `repo_id` ("org/name"), or of the directory LOCAL_KERNELS
// names for it, that a process loading `loadable` selects on `environment` (options.backend
// overriding its backend); loads nothing. Warnings are said as get_kernel says them.
FetchedKernel fetch_kernel(std::string_view repo_id, const resolver::Environment& environment,
                           const resolver::Loadable& loadable, const GetKernelOptions& options = {});

}  // namespace kernelhub
