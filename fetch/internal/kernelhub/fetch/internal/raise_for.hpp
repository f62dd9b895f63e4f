// raise_for(): the one place that turns an Error value (base/error.hpp) into the exception class of
// errors.hpp that matches its code. The APIs that throw (get_kernel, tvm_ffi::get_kernel) call it;
// a program that uses the package catches what it throws and never raises them itself.
#pragma once

#include "kernelhub/base/error.hpp"
#include "kernelhub/fetch/errors.hpp"

namespace kernelhub {

// Throws the exception class that matches `error.code`.
[[noreturn]] void raise_for(const Error& error);

}  // namespace kernelhub
