// Builds Kernels: the only way to make one, and only the load stage's (load.cpp). Kernel
// (kernelhub.hpp) names it a friend; this header is not installed, so a program that uses the
// package cannot make a Kernel that no load made.
#pragma once

#include <memory>
#include <vector>

#include "kernelhub/fetch/internal/fetch.hpp"
#include "kernelhub/kernelhub.hpp"
#include "kernelhub/loader/internal/op_library.hpp"

namespace kernelhub {

struct KernelFactory {
  static Kernel make(std::shared_ptr<const loader::OpLibrary> library, FetchedVariant fetched, double load_seconds,
                     std::vector<Kernel> dependencies);
};

}  // namespace kernelhub
