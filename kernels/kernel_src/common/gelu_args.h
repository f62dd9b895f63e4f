// Argument checks for the GELU ops, shared by the backends.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include "checks.h"

namespace kh {

// input [..., 2d] -> out [..., d].
inline void check_geglu_args(const at::Tensor& out, const at::Tensor& input) {
  constexpr const char* op = "geglu";
  check_float(op, "input", input);
  TORCH_CHECK(input.dim() >= 1 && input.size(-1) % 2 == 0, op, ": input's last dimension must be even, got ",
              input.sizes());
  check_like(op, "out", out, "input", input, false);
  std::vector<int64_t> expected = input.sizes().vec();
  expected.back() /= 2;
  TORCH_CHECK(out.sizes() == at::IntArrayRef(expected), op, ": out must have shape ", at::IntArrayRef(expected),
              ", got ", out.sizes());
}

inline void check_gelu_args(const char* op, const at::Tensor& out, const at::Tensor& input) {
  check_float(op, "input", input);
  check_like(op, "out", out, "input", input);
}

}  // namespace kh
