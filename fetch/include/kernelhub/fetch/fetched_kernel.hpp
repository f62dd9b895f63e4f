// FetchedKernel: what a kernel says of the variant it was fetched from, the same for the torch API's
// Kernel (kernelhub.hpp) and the TVM FFI one (tvm_ffi.hpp), which add what they loaded (ops,
// functions) on top, and for fetch_kernel (fetch_kernel.hpp), which loads nothing. Torch-free, so the TVM FFI API links
// no LibTorch.
//
// Thread safety: a value type over state that never changes; copies share it.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kernelhub/fetch/load_timings.hpp"
#include "kernelhub/fetch/metadata.hpp"
#include "kernelhub/resolver/select.hpp"

namespace kernelhub {

struct FetchedVariant;  // what the fetch stage made (not installed: fetch/internal/kernelhub/fetch/internal/fetch.hpp)

class FetchedKernel {
 public:
  // e.g. torch215-cxx11-cpu-x86_64-linux, tvm-ffi01-cpu-x86_64-linux
  const std::string& variant() const;
  const std::string& revision() const;        // the commit, or "local"
  const std::filesystem::path& path() const;  // the variant directory
  const Metadata& metadata() const;
  const std::vector<resolver::Decision>& decisions() const;  // every variant, best first
  const LoadTimings& timings() const;                        // where the time of the load went
  // What the load warned about and did not stop it for (an unsigned variant, a signer no policy
  // accepts, no digest, a dirty build), one sentence each; said through
  // GetKernelOptions::on_warning as well.
  std::vector<std::string> warnings() const;

 protected:
  // `fetched` lives as long as the kernel's own state: an aliasing pointer into it.
  explicit FetchedKernel(std::shared_ptr<const FetchedVariant> fetched) : fetched_(std::move(fetched)) {}

 private:
  std::shared_ptr<const FetchedVariant> fetched_;
};

}  // namespace kernelhub
