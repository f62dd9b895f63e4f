# The headers the C++ package installs (under <prefix>/include), and nothing else: the public API.
# consumer_test.cmake fails on a header missing from the install, and on one the install has that
# is not listed here (an internal header that reached a layer's include/ folder).
# Torch-free: kernelhub::fetch (kernelhub/fetch/fetch_kernel.hpp and what it includes). The fetch
# stage itself (fetch.hpp: FetchRequest, FetchContext, the CLI's and the shim's knobs) is internal.
set(KERNELHUB_PUBLIC_HEADERS
    kernelhub/base/environment_source.hpp
    kernelhub/base/environment_variables.hpp
    kernelhub/base/error.hpp
    kernelhub/base/result.hpp
    kernelhub/client/progress.hpp
    kernelhub/client/repo_id.hpp
    kernelhub/fetch/errors.hpp
    kernelhub/fetch/fetch_kernel.hpp
    kernelhub/fetch/fetched_kernel.hpp
    kernelhub/fetch/get_kernel_options.hpp
    kernelhub/fetch/kernel_dependency.hpp
    kernelhub/fetch/load_timings.hpp
    kernelhub/fetch/metadata.hpp
    kernelhub/resolver/cuda_target.hpp
    kernelhub/resolver/environment.hpp
    kernelhub/resolver/gpu_fit.hpp
    kernelhub/resolver/loadable.hpp
    kernelhub/resolver/reason.hpp
    kernelhub/resolver/select.hpp
    kernelhub/resolver/variant.hpp
    kernelhub/resolver/version.hpp)
# kernelhub::sigstore (torch-free): Sigstore bundle verification, policies, managed-key signing.
set(KERNELHUB_PUBLIC_HEADERS_SIGSTORE
    kernelhub/sigstore/artifact.hpp
    kernelhub/sigstore/bundle.hpp
    kernelhub/sigstore/policy.hpp
    kernelhub/sigstore/sign.hpp
    kernelhub/sigstore/signer.hpp
    kernelhub/sigstore/sigstore.hpp
    kernelhub/sigstore/time.hpp
    kernelhub/sigstore/trusted_root.hpp
    kernelhub/sigstore/verify.hpp)
# kernelhub::tvm_ffi (KERNELHUB_WITH_TVM_FFI): tvm_ffi::get_kernel and the DLPack header it needs.
set(KERNELHUB_PUBLIC_HEADERS_TVM_FFI
    kernelhub/third_party/dlpack/dlpack.h
    kernelhub/tvm_ffi.hpp
    kernelhub/tvm_ffi_loader/argument.hpp
    kernelhub/tvm_ffi_loader/signature.hpp)
# kernelhub::kernelhub (KERNELHUB_WITH_TORCH): get_kernel and Kernel.
set(KERNELHUB_PUBLIC_HEADERS_TORCH
    kernelhub/kernelhub.hpp
    kernelhub/loader/op_info.hpp
    kernelhub/op_signature.hpp)
