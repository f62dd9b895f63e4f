// What a tvm_ffi::Kernel holds: the loaded library and the variant it came from.
#pragma once

#include <memory>

#include "kernelhub/fetch/internal/fetch.hpp"
#include "kernelhub/tvm_ffi.hpp"
#include "kernelhub/tvm_ffi_loader/internal/kernel_library.hpp"

namespace kernelhub::tvm_ffi {

struct Kernel::State {
  std::shared_ptr<const tvm_ffi_loader::KernelLibrary> library;
  FetchedVariant fetched;
  std::string backend;  // "cpu", "cuda", ... of the variant
  std::string runtime_version;
};

}  // namespace kernelhub::tvm_ffi
