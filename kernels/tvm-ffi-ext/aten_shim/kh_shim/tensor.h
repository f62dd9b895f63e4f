// The ATen shim's Tensor: the part of at::Tensor the reference kernels use, over a DLPack tensor.
//
// The kernels (kernel_src/) are written against ATen. Built as a tvm-ffi kernel, they include this
// folder instead of torch's headers (ATen/..., c10/... here name the shim), so the same source is
// compiled, with the same device code, and the library links libtvm_ffi and no LibTorch. The shim
// has what the kernels call, with ATen's meaning: sizes, strides, dtypes and devices; views
// (as_strided, reshape, view, unsqueeze); copies (contiguous, copy_, to; CPU and CUDA), empty; the
// CPU row statistics the norms take from ATen (pow, mean, rsqrt, layer_norm: an fp64 sum where ATen
// sums in fp32, so the results can differ from the torch build's in the last bit); TORCH_CHECK,
// which raises a TVM-FFI RuntimeError with the check's message; AT_DISPATCH; parallel_for (serial).
//
// Thread safety: as at::Tensor, a handle; copies share the data.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "dlpack/dlpack.h"
#include "kh_shim/scalar.h"

namespace kh_shim {

// Raises a TVM-FFI RuntimeError (tensor.cpp), as TORCH_CHECK raises torch's RuntimeError.
[[noreturn]] void fail(const std::string& message);

template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

}  // namespace kh_shim

#define TORCH_CHECK(cond, ...)                                                        \
  do {                                                                                \
    if (C10_UNLIKELY(!(cond))) ::kh_shim::fail(::kh_shim::concat("", ##__VA_ARGS__)); \
  } while (false)

namespace c10 {

enum class DeviceType : std::int8_t { CPU = 0, CUDA = 1 };

struct Device {
  DeviceType type_ = DeviceType::CPU;
  std::int8_t index_ = -1;
  Device() = default;
  Device(DeviceType type, int index = -1) : type_(type), index_(static_cast<std::int8_t>(index)) {}
  DeviceType type() const { return type_; }
  std::int8_t index() const { return index_; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  bool operator==(const Device& other) const { return type_ == other.type_ && index_ == other.index_; }
  bool operator!=(const Device& other) const { return !(*this == other); }
};

inline std::ostream& operator<<(std::ostream& out, const Device& d) {
  out << (d.is_cuda() ? "cuda" : "cpu");
  if (d.index() >= 0) out << ":" << static_cast<int>(d.index());
  return out;
}

// A view of contiguous values (c10::ArrayRef): from a vector, an initializer list (valid for the
// full expression), or a pointer and a length.
template <typename T>
class ArrayRef {
 public:
  ArrayRef() = default;
  ArrayRef(const T* data, std::size_t size) : data_(data), size_(size) {}
  ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"  // as c10's: the list outlives the full expression
  ArrayRef(std::initializer_list<T> list) : data_(list.begin()), size_(list.size()) {}  // NOLINT
#pragma GCC diagnostic pop
  ArrayRef(const T& one) : data_(&one), size_(1) {}  // NOLINT
  const T* data() const {
    return data_;
  }
  std::size_t size() const {
    return size_;
  }
  bool empty() const {
    return size_ == 0;
  }
  const T* begin() const {
    return data_;
  }
  const T* end() const {
    return data_ + size_;
  }
  const T& operator[](std::size_t i) const {
    return data_[i];
  }
  std::vector<T> vec() const {
    return {begin(), end()};
  }
  ArrayRef slice(std::size_t start, std::size_t length) const {
    return {data_ + start, length};
  }
  ArrayRef slice(std::size_t start) const {
    return {data_ + start, size_ - start};
  }
  bool operator==(const ArrayRef& other) const {
    if (size_ != other.size_) return false;
    for (std::size_t i = 0; i < size_; ++i) {
      if (data_[i] != other.data_[i]) return false;
    }
    return true;
  }
  bool operator!=(const ArrayRef& other) const { return !(*this == other); }

 private:
  const T* data_ = nullptr;
  std::size_t size_ = 0;
};

template <typename T>
std::ostream& operator<<(std::ostream& out, ArrayRef<T> values) {
  out << "[";
  for (std::size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << values[i];
  return out << "]";
}

using IntArrayRef = ArrayRef<std::int64_t>;

}  // namespace c10

namespace at {

using c10::Device;
using c10::DeviceType;
using c10::IntArrayRef;

struct TensorOptions {
  ScalarType dtype = ScalarType::Float;
  Device device;
};

class Tensor {
 public:
  Tensor() = default;
  // A view of the caller's DLPack tensor (its data stays the caller's). Raises for a device or a
  // dtype the shim does not model.
  static Tensor wrap(const DLTensor& tensor);

  bool defined() const { return impl_ != nullptr; }
  std::int64_t dim() const { return static_cast<std::int64_t>(impl_->sizes.size()); }
  std::int64_t size(std::int64_t d) const { return impl_->sizes[wrap_dim(d)]; }
  std::int64_t stride(std::int64_t d) const { return impl_->strides[wrap_dim(d)]; }
  IntArrayRef sizes() const { return impl_->sizes; }
  IntArrayRef strides() const { return impl_->strides; }
  std::int64_t numel() const;
  ScalarType scalar_type() const { return impl_->dtype; }
  Device device() const { return impl_->device; }
  int get_device() const { return impl_->device.index(); }
  bool is_cuda() const { return impl_->device.is_cuda(); }
  bool is_cpu() const { return impl_->device.is_cpu(); }
  TensorOptions options() const { return {impl_->dtype, impl_->device}; }
  std::int64_t element_size() const { return c10::elementSize(impl_->dtype); }
  bool is_contiguous() const;

  void* data_ptr() const { return impl_->data; }
  void* mutable_data_ptr() const { return impl_->data; }
  const void* const_data_ptr() const { return impl_->data; }
  template <typename T>
  const T* const_data_ptr() const {
    return static_cast<const T*>(impl_->data);
  }
  template <typename T>
  T* mutable_data_ptr() const {
    return static_cast<T*>(impl_->data);
  }

  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides) const;
  Tensor contiguous() const;
  Tensor reshape(IntArrayRef sizes) const;  // a view where the strides allow, else a copy
  Tensor view(IntArrayRef sizes) const;     // a view; raises where the strides do not allow one
  Tensor unsqueeze(std::int64_t d) const;
  Tensor transpose(std::int64_t a, std::int64_t b) const;
  Tensor unflatten(std::int64_t d, IntArrayRef sizes) const;  // a view; one size may be -1
  const Tensor& copy_(const Tensor& src) const;               // same shape and dtype, any strides and device
  Tensor to(ScalarType dtype) const;                          // CPU
  Tensor pow(double exponent) const;                          // CPU, floating types
  Tensor mean(std::int64_t d) const;                          // CPU, floating types, over one dimension
  Tensor operator+(double value) const;                       // CPU, floating types

  struct Impl {
    void* data = nullptr;
    ScalarType dtype = ScalarType::Undefined;
    Device device;
    std::vector<std::int64_t> sizes;
    std::vector<std::int64_t> strides;
    std::shared_ptr<void> storage;  // an allocation of ours (empty); none for the caller's tensors
  };
  explicit Tensor(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  const Impl& impl() const { return *impl_; }

 private:
  std::size_t wrap_dim(std::int64_t d) const;
  std::shared_ptr<Impl> impl_;
};

Tensor empty(IntArrayRef sizes, TensorOptions options);
Tensor rsqrt(const Tensor& t);  // CPU, floating types
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps);  // CPU, over the last dimension

// ATen's intra-op parallelism; serial here (a tvm-ffi kernel has no thread pool of its own).
template <typename F>
void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t /*grain_size*/, const F& f) {
  if (begin < end) f(begin, end);
}

}  // namespace at

namespace kh_shim {

// The CUDA side of the shim (tensor_cuda.cu), present only in a CUDA build: strided copy and
// stream-ordered allocation on the stream TVM-FFI gives the device.
void cuda_copy(const at::Tensor& dst, const at::Tensor& src);
std::shared_ptr<void> cuda_allocate(std::int64_t bytes, int device);
bool has_cuda();

}  // namespace kh_shim

#define KH_SHIM_DISPATCH_CASE(enum_value, type, ...) \
  case enum_value: {                                 \
    using scalar_t = type;                           \
    return __VA_ARGS__();                            \
  }

#define AT_DISPATCH_FLOATING_TYPES_AND2(T1, T2, TYPE, NAME, ...)                                                  \
  [&] {                                                                                                           \
    static_assert((T1) == ::at::kHalf && (T2) == ::at::kBFloat16, "the shim dispatches Half and BFloat16");       \
    const ::at::ScalarType kh_dispatch_type = (TYPE);                                                             \
    switch (kh_dispatch_type) {                                                                                   \
      KH_SHIM_DISPATCH_CASE(::at::ScalarType::Double, double, __VA_ARGS__)                                        \
      KH_SHIM_DISPATCH_CASE(::at::ScalarType::Float, float, __VA_ARGS__)                                          \
      KH_SHIM_DISPATCH_CASE(::at::ScalarType::Half, ::c10::Half, __VA_ARGS__)                                     \
      KH_SHIM_DISPATCH_CASE(::at::ScalarType::BFloat16, ::c10::BFloat16, __VA_ARGS__)                             \
      default: ::kh_shim::fail(::kh_shim::concat("\"", NAME, "\" not implemented for '", kh_dispatch_type, "'")); \
    }                                                                                                             \
  }()
