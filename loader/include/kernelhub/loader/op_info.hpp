// OpInfo: one op a loaded library registered, as Kernel::ops() (kernelhub.hpp) lists it.
#pragma once

#include <string>

namespace kernelhub::loader {

struct OpInfo {
  std::string name;    // without the namespace, e.g. "rms_norm"
  std::string schema;  // "_ns::rms_norm(Tensor(a!) out, Tensor input, Tensor weight, float eps) -> ()"
};

}  // namespace kernelhub::loader
