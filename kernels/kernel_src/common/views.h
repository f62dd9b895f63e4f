// How the kernels see their tensors. A kernel walks a tensor through a view with a contiguous last
// dimension: [rows, hidden] with one row stride (rows_of), or the tensor's own shape with any outer
// strides (last_contiguous_of). A tensor whose strides allow no such view (a permuted view, say) is
// copied once: correct, only slower. Outputs and in-place operands then go through a scratch copy
// that finish() writes back.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>

#include <optional>
#include <vector>

namespace kh {

// Folds the first `n` dimensions of `t` into one, without copying; nullopt when their strides
// do not allow it.
inline std::optional<at::Tensor> fold_leading(const at::Tensor& t, int64_t n) {
  std::vector<int64_t> sizes{1}, strides{0};
  int64_t expected = -1;  // the stride the next outer dimension of size > 1 must have
  for (int64_t d = n - 1; d >= 0; --d) {
    sizes[0] *= t.size(d);
    if (t.size(d) == 1) continue;
    if (expected != -1 && t.stride(d) != expected) return std::nullopt;
    if (expected == -1) strides[0] = t.stride(d);
    expected = t.stride(d) * t.size(d);
  }
  for (int64_t d = n; d < t.dim(); ++d) {
    sizes.push_back(t.size(d));
    strides.push_back(t.stride(d));
  }
  return t.as_strided(sizes, strides);
}

// The offset in elements of `t`'s last element from its first (of a non-empty tensor with
// non-negative strides): whether a kernel may index it with 32-bit offsets.
inline int64_t last_element_offset(const at::Tensor& t) {
  int64_t last = 0;
  for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
  return last;
}

inline bool last_dim_contiguous(const at::Tensor& t) { return t.dim() == 0 || t.size(-1) <= 1 || t.stride(-1) == 1; }

// `t` itself, if its last dimension is contiguous.
inline std::optional<at::Tensor> last_contiguous_of(const at::Tensor& t) {
  if (!last_dim_contiguous(t)) return std::nullopt;
  return t;
}

// [numel / size(-1), size(-1)] with one row stride and a contiguous last dimension.
inline std::optional<at::Tensor> rows_of(const at::Tensor& t) {
  if (t.dim() == 0 || !last_dim_contiguous(t)) return std::nullopt;
  return fold_leading(t, t.dim() - 1);
}

// The view of an input: of the tensor itself when its strides allow, else of a contiguous copy.
template <typename View>
at::Tensor input_view(const at::Tensor& t, View view) {
  if (auto v = view(t)) return *v;
  return *view(t.contiguous());
}

// An output (or in-place operand) seen through `view`; with load, a scratch copy starts from the
// tensor's values.
class Output {
 public:
  template <typename View>
  Output(at::Tensor& out, bool load, View view) : out_(out) {
    if (auto v = view(out)) {
      work_ = *v;
    } else {
      scratch_ = load ? out.contiguous() : at::empty(out.sizes(), out.options());
      work_ = *view(scratch_);
    }
  }
  at::Tensor& get() { return work_; }
  void finish() {
    if (scratch_.defined()) out_.copy_(scratch_);
  }

 private:
  at::Tensor& out_;
  at::Tensor work_;
  at::Tensor scratch_;
};

}  // namespace kh
