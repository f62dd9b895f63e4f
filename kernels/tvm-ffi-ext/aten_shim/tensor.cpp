// The ATen shim's host side (kh_shim/tensor.h): DLPack tensors as at::Tensor, views, copies, and the
// CPU row statistics.
#include <tvm/ffi/error.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "kh_shim/tensor.h"

namespace kh_shim {

void fail(const std::string& message) {
  TVM_FFI_THROW(RuntimeError) << message;
}

#if !defined(KH_SHIM_CUDA)
bool has_cuda() {
  return false;
}
void cuda_copy(const at::Tensor&, const at::Tensor&) {
  fail("this is a CPU build of the kernel: no CUDA tensors");
}
std::shared_ptr<void> cuda_allocate(std::int64_t, int) {
  fail("this is a CPU build of the kernel: no CUDA tensors");
}
#endif

}  // namespace kh_shim

namespace at {

namespace {

ScalarType scalar_type_of(const DLDataType& dtype) {
  if (dtype.lanes != 1) return ScalarType::Undefined;
  switch (dtype.code) {
    case kDLFloat:
      return dtype.bits == 32   ? ScalarType::Float
             : dtype.bits == 16 ? ScalarType::Half
             : dtype.bits == 64 ? ScalarType::Double
                                : ScalarType::Undefined;
    case kDLBfloat: return dtype.bits == 16 ? ScalarType::BFloat16 : ScalarType::Undefined;
    case kDLInt:
      return dtype.bits == 64   ? ScalarType::Long
             : dtype.bits == 32 ? ScalarType::Int
             : dtype.bits == 16 ? ScalarType::Short
             : dtype.bits == 8  ? ScalarType::Char
                                : ScalarType::Undefined;
    case kDLUInt: return dtype.bits == 8 ? ScalarType::Byte : ScalarType::Undefined;
    case kDLBool: return dtype.bits == 8 ? ScalarType::Bool : ScalarType::Undefined;
    default: return ScalarType::Undefined;
  }
}

std::vector<std::int64_t> contiguous_strides(IntArrayRef sizes) {
  std::vector<std::int64_t> strides(sizes.size());
  std::int64_t step = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    strides[i] = step;
    step *= std::max<std::int64_t>(sizes[i], 1);
  }
  return strides;
}

std::int64_t product(IntArrayRef sizes) {
  std::int64_t n = 1;
  for (std::int64_t s : sizes) n *= s;
  return n;
}

// Visits every element's offset (in elements) of a strided layout, in row-major order.
template <typename F>
void for_each_offset(IntArrayRef sizes, IntArrayRef strides, const F& f) {
  const std::int64_t n = product(sizes);
  if (n == 0) return;
  std::vector<std::int64_t> index(sizes.size(), 0);
  std::int64_t offset = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    f(i, offset);
    for (std::size_t d = sizes.size(); d-- > 0;) {
      if (++index[d] < sizes[d]) {
        offset += strides[d];
        break;
      }
      offset -= strides[d] * (sizes[d] - 1);
      index[d] = 0;
    }
  }
}

// Calls f(T{}) with T the C++ type of the floating dtype `t`: one dispatch per op, not per element.
template <typename F>
void with_real_type(ScalarType t, const F& f) {
  switch (t) {
    case ScalarType::Float: return f(float{});
    case ScalarType::Double: return f(double{});
    case ScalarType::Half: return f(Half{});
    case ScalarType::BFloat16: return f(BFloat16{});
    default: kh_shim::fail(kh_shim::concat("the ATen shim has no arithmetic for ", t));
  }
}

// out[i] = op(src[i]) over two dense tensors of one floating dtype, op on double.
template <typename Op>
void map_real(const Tensor& src, const Tensor& out, const Op& op) {
  with_real_type(src.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = src.const_data_ptr<T>();
    T* to = out.mutable_data_ptr<T>();
    const std::int64_t n = src.numel();
    for (std::int64_t i = 0; i < n; ++i) to[i] = static_cast<T>(op(static_cast<double>(in[i])));
  });
}

bool is_integral(ScalarType t) {
  return t == ScalarType::Long || t == ScalarType::Int || t == ScalarType::Short || t == ScalarType::Char ||
         t == ScalarType::Byte || t == ScalarType::Bool;
}

std::int64_t load_integer(const void* data, ScalarType t, std::int64_t i) {
  switch (t) {
    case ScalarType::Long: return static_cast<const std::int64_t*>(data)[i];
    case ScalarType::Int: return static_cast<const std::int32_t*>(data)[i];
    case ScalarType::Short: return static_cast<const std::int16_t*>(data)[i];
    case ScalarType::Char: return static_cast<const std::int8_t*>(data)[i];
    case ScalarType::Byte:
    case ScalarType::Bool: return static_cast<const std::uint8_t*>(data)[i];
    default: kh_shim::fail(kh_shim::concat("the ATen shim cannot read ", t, " as an integer"));
  }
}

void store_integer(void* data, ScalarType t, std::int64_t i, std::int64_t v) {
  switch (t) {
    case ScalarType::Long: static_cast<std::int64_t*>(data)[i] = v; return;
    case ScalarType::Int: static_cast<std::int32_t*>(data)[i] = static_cast<std::int32_t>(v); return;
    default: kh_shim::fail(kh_shim::concat("the ATen shim cannot write ", t, " as an integer"));
  }
}

void require_cpu(const Tensor& t, const char* what) {
  TORCH_CHECK(t.is_cpu(), "the ATen shim's ", what, " runs on the CPU; the tensor is on ", t.device());
}

// `t` as a contiguous CPU tensor of its own dtype (itself when already contiguous).
Tensor dense(const Tensor& t) {
  return t.is_contiguous() ? t : t.contiguous();
}

}  // namespace

Tensor Tensor::wrap(const DLTensor& tensor) {
  auto impl = std::make_shared<Impl>();
  impl->dtype = scalar_type_of(tensor.dtype);
  TORCH_CHECK(impl->dtype != ScalarType::Undefined, "unsupported DLPack dtype (code ", int(tensor.dtype.code),
              ", bits ", int(tensor.dtype.bits), ", lanes ", tensor.dtype.lanes, ")");
  if (tensor.device.device_type == kDLCPU) {
    impl->device = Device(DeviceType::CPU);
  } else if (tensor.device.device_type == kDLCUDA) {
    impl->device = Device(DeviceType::CUDA, tensor.device.device_id);
  } else {
    kh_shim::fail(kh_shim::concat("tensors on DLPack device type ", int(tensor.device.device_type),
                                  " are not supported (cpu and cuda are)"));
  }
  impl->sizes.assign(tensor.shape, tensor.shape + tensor.ndim);
  impl->strides = tensor.strides != nullptr ? std::vector<std::int64_t>(tensor.strides, tensor.strides + tensor.ndim)
                                            : contiguous_strides(impl->sizes);
  impl->data = static_cast<char*>(tensor.data) + tensor.byte_offset;
  return Tensor(std::move(impl));
}

std::size_t Tensor::wrap_dim(std::int64_t d) const {
  const std::int64_t n = dim();
  TORCH_CHECK(d >= -n && d < n, "Dimension out of range (expected to be in range of [", -n, ", ", n - 1, "], but got ",
              d, ")");
  return static_cast<std::size_t>(d < 0 ? d + n : d);
}

std::int64_t Tensor::numel() const {
  return product(impl_->sizes);
}

bool Tensor::is_contiguous() const {
  std::int64_t expected = 1;
  for (std::size_t i = impl_->sizes.size(); i-- > 0;) {
    if (impl_->sizes[i] == 1) continue;
    if (impl_->strides[i] != expected) return false;
    expected *= impl_->sizes[i];
  }
  return true;
}

Tensor Tensor::as_strided(IntArrayRef sizes, IntArrayRef strides) const {
  TORCH_CHECK(sizes.size() == strides.size(), "as_strided: ", sizes.size(), " sizes and ", strides.size(), " strides");
  auto impl = std::make_shared<Impl>(*impl_);
  impl->sizes = sizes.vec();
  impl->strides = strides.vec();
  return Tensor(std::move(impl));
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  Tensor out = empty(sizes(), options());
  out.copy_(*this);
  return out;
}

Tensor Tensor::view(IntArrayRef sizes) const {
  std::vector<std::int64_t> shape = sizes.vec();
  std::int64_t known = 1;
  int inferred = -1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      inferred = static_cast<int>(i);
    } else {
      known *= shape[i];
    }
  }
  if (inferred >= 0) shape[inferred] = known == 0 ? 0 : numel() / known;
  TORCH_CHECK(product(shape) == numel(), "shape ", IntArrayRef(shape), " is invalid for input of size ", numel());
  TORCH_CHECK(is_contiguous(), "view size is not compatible with input tensor's size and stride");
  return as_strided(shape, contiguous_strides(shape));
}

Tensor Tensor::reshape(IntArrayRef sizes) const {
  return (is_contiguous() ? *this : contiguous()).view(sizes);
}

Tensor Tensor::unsqueeze(std::int64_t d) const {
  const std::int64_t n = dim() + 1;
  TORCH_CHECK(d >= -n && d < n, "unsqueeze: dimension ", d, " out of range");
  const std::size_t at = static_cast<std::size_t>(d < 0 ? d + n : d);
  std::vector<std::int64_t> shape = impl_->sizes, strides = impl_->strides;
  const std::int64_t stride = at < strides.size() ? strides[at] * shape[at] : 1;
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(at), 1);
  strides.insert(strides.begin() + static_cast<std::ptrdiff_t>(at), stride);
  return as_strided(shape, strides);
}

Tensor Tensor::transpose(std::int64_t a, std::int64_t b) const {
  std::vector<std::int64_t> shape = impl_->sizes, strides = impl_->strides;
  std::swap(shape[wrap_dim(a)], shape[wrap_dim(b)]);
  std::swap(strides[wrap_dim(a)], strides[wrap_dim(b)]);
  return as_strided(shape, strides);
}

Tensor Tensor::unflatten(std::int64_t d, IntArrayRef sizes) const {
  const std::size_t at = wrap_dim(d);
  std::vector<std::int64_t> parts = sizes.vec();
  std::int64_t known = 1;
  for (std::int64_t s : parts) known *= s == -1 ? 1 : s;
  for (std::int64_t& s : parts) {
    if (s == -1) s = known == 0 ? 0 : impl_->sizes[at] / known;
  }
  TORCH_CHECK(product(parts) == impl_->sizes[at], "unflatten: provided sizes ", sizes,
              " don't multiply up to the size of dim ", d, " (", impl_->sizes[at], ") in the input tensor");
  std::vector<std::int64_t> shape(impl_->sizes.begin(), impl_->sizes.begin() + static_cast<std::ptrdiff_t>(at));
  std::vector<std::int64_t> strides(impl_->strides.begin(), impl_->strides.begin() + static_cast<std::ptrdiff_t>(at));
  std::int64_t step = impl_->strides[at];
  std::vector<std::int64_t> part_strides(parts.size());
  for (std::size_t i = parts.size(); i-- > 0;) {
    part_strides[i] = step;
    step *= parts[i];
  }
  shape.insert(shape.end(), parts.begin(), parts.end());
  strides.insert(strides.end(), part_strides.begin(), part_strides.end());
  shape.insert(shape.end(), impl_->sizes.begin() + static_cast<std::ptrdiff_t>(at) + 1, impl_->sizes.end());
  strides.insert(strides.end(), impl_->strides.begin() + static_cast<std::ptrdiff_t>(at) + 1, impl_->strides.end());
  return as_strided(shape, strides);
}

const Tensor& Tensor::copy_(const Tensor& src) const {
  TORCH_CHECK(sizes() == src.sizes() && scalar_type() == src.scalar_type(), "copy_: shape ", src.sizes(), " ",
              src.scalar_type(), " into ", sizes(), " ", scalar_type());
  if (is_cuda() || src.is_cuda()) {
    TORCH_CHECK(is_cuda() && src.is_cuda() && device() == src.device(), "copy_ between ", src.device(), " and ",
                device(), " is not supported by the ATen shim");
    kh_shim::cuda_copy(*this, src);
    return *this;
  }
  const std::int64_t size = element_size();
  auto* dst = static_cast<char*>(data_ptr());
  const auto* from = static_cast<const char*>(src.const_data_ptr());
  std::vector<std::int64_t> offsets;
  offsets.reserve(static_cast<std::size_t>(numel()));
  for_each_offset(src.sizes(), src.strides(), [&](std::int64_t, std::int64_t o) { offsets.push_back(o); });
  for_each_offset(sizes(), strides(), [&](std::int64_t i, std::int64_t o) {
    std::memcpy(dst + o * size, from + offsets[static_cast<std::size_t>(i)] * size, static_cast<std::size_t>(size));
  });
  return *this;
}

Tensor Tensor::to(ScalarType dtype) const {
  if (dtype == scalar_type()) return *this;
  require_cpu(*this, "to()");
  const Tensor src = dense(*this);
  Tensor out = empty(sizes(), {dtype, device()});
  const std::int64_t n = numel();
  if (is_integral(dtype) && is_integral(src.scalar_type())) {
    for (std::int64_t i = 0; i < n; ++i)
      store_integer(out.data_ptr(), dtype, i, load_integer(src.data_ptr(), src.scalar_type(), i));
  } else {
    with_real_type(src.scalar_type(), [&](auto from_tag) {
      with_real_type(dtype, [&](auto to_tag) {
        using From = decltype(from_tag);
        using To = decltype(to_tag);
        const From* in = src.const_data_ptr<From>();
        To* to = out.mutable_data_ptr<To>();
        for (std::int64_t i = 0; i < n; ++i) to[i] = static_cast<To>(static_cast<double>(in[i]));
      });
    });
  }
  return out;
}

Tensor Tensor::pow(double exponent) const {
  require_cpu(*this, "pow()");
  // Whole exponents only: glibc's pow carries a 2.29 symbol version, newer than manylinux_2_28 allows.
  TORCH_CHECK(exponent == std::floor(exponent) && exponent >= 0 && exponent <= 64,
              "the ATen shim's pow() takes a whole exponent from 0 to 64, got ", exponent);
  const Tensor src = dense(*this);
  Tensor out = empty(sizes(), options());
  const bool wide = scalar_type() == ScalarType::Double;
  const int n = static_cast<int>(exponent);
  // Rounded to the dtype's precision after each product, as ATen's pow computes x * x for 2.
  map_real(src, out, [&](double v) {
    double r = 1;
    for (int i = 0; i < n; ++i) r = wide ? r * v : double(float(r) * float(v));
    return r;
  });
  return out;
}

Tensor Tensor::mean(std::int64_t d) const {
  require_cpu(*this, "mean()");
  TORCH_CHECK(wrap_dim(d) == static_cast<std::size_t>(dim() - 1), "the ATen shim's mean() reduces the last dimension");
  const Tensor src = dense(*this);
  std::vector<std::int64_t> shape(impl_->sizes.begin(), impl_->sizes.end() - 1);
  Tensor out = empty(shape, options());
  const std::int64_t inner = size(-1), rows = inner == 0 ? 0 : numel() / inner;
  with_real_type(scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = src.const_data_ptr<T>();
    T* to = out.mutable_data_ptr<T>();
    for (std::int64_t r = 0; r < rows; ++r) {
      double sum = 0;  // fp64: the exactly rounded mean, where ATen sums fp32 in its own order
      for (std::int64_t i = 0; i < inner; ++i) sum += static_cast<double>(in[r * inner + i]);
      to[r] = static_cast<T>(sum / static_cast<double>(inner));
    }
  });
  return out;
}

Tensor Tensor::operator+(double value) const {
  require_cpu(*this, "operator+");
  const Tensor src = dense(*this);
  Tensor out = empty(sizes(), options());
  const bool wide = scalar_type() == ScalarType::Double;
  map_real(src, out, [&](double v) { return wide ? v + value : double(float(v) + float(value)); });
  return out;
}

Tensor empty(IntArrayRef sizes, TensorOptions options) {
  auto impl = std::make_shared<Tensor::Impl>();
  impl->dtype = options.dtype;
  impl->device = options.device;
  impl->sizes = sizes.vec();
  impl->strides = contiguous_strides(sizes);
  const std::int64_t bytes = std::max<std::int64_t>(product(sizes), 1) * c10::elementSize(options.dtype);
  if (options.device.is_cuda()) {
    impl->storage = kh_shim::cuda_allocate(bytes, options.device.index());
  } else {
    const std::size_t rounded = (static_cast<std::size_t>(bytes) + 63) / 64 * 64;
    impl->storage = std::shared_ptr<void>(std::aligned_alloc(64, rounded), std::free);
    TORCH_CHECK(impl->storage != nullptr, "out of memory allocating ", bytes, " bytes");
  }
  impl->data = impl->storage.get();
  return Tensor(std::move(impl));
}

Tensor rsqrt(const Tensor& t) {
  require_cpu(t, "rsqrt()");
  const Tensor src = dense(t);
  Tensor out = empty(t.sizes(), t.options());
  const bool wide = t.scalar_type() == ScalarType::Double;
  map_real(src, out, [&](double v) { return wide ? 1.0 / std::sqrt(v) : double(1.0f / std::sqrt(float(v))); });
  return out;
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps) {
  require_cpu(input, "layer_norm()");
  TORCH_CHECK(normalized_shape.size() == 1 && normalized_shape[0] == input.size(-1),
              "the ATen shim's layer_norm normalises the last dimension");
  const Tensor x = dense(input);
  // Undefined tensors where absent (an optional of a Tensor trips GCC 12's -Wmaybe-uninitialized).
  const Tensor w = weight && weight->defined() ? dense(*weight) : Tensor();
  const Tensor b = bias && bias->defined() ? dense(*bias) : Tensor();
  Tensor out = empty(input.sizes(), input.options());
  const std::int64_t inner = input.size(-1), rows = inner == 0 ? 0 : input.numel() / inner;
  const bool wide = input.scalar_type() == ScalarType::Double;
  with_real_type(input.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* wp = w.defined() ? w.const_data_ptr<T>() : nullptr;
    const T* bp = b.defined() ? b.const_data_ptr<T>() : nullptr;
    for (std::int64_t r = 0; r < rows; ++r) {
      const T* xr = x.const_data_ptr<T>() + r * inner;
      T* yr = out.mutable_data_ptr<T>() + r * inner;
      double sum = 0, squares = 0;
      for (std::int64_t i = 0; i < inner; ++i) sum += static_cast<double>(xr[i]);
      const double mean = sum / static_cast<double>(inner);
      for (std::int64_t i = 0; i < inner; ++i) {
        const double centred = static_cast<double>(xr[i]) - mean;
        squares += centred * centred;
      }
      // ATen's CPU layer norm: fp32 (opmath) mean and rstd, (x - mean) * rstd * w + b, one rounding.
      const double variance = squares / static_cast<double>(inner);
      const double rstd =
          wide ? 1.0 / std::sqrt(variance + eps) : double(1.0f / std::sqrt(float(variance) + float(eps)));
      for (std::int64_t i = 0; i < inner; ++i) {
        const double v = static_cast<double>(xr[i]);
        double y = wide ? (v - mean) * rstd : double((float(v) - float(mean)) * float(rstd));
        if (wp) y = wide ? y * static_cast<double>(wp[i]) : double(float(y) * static_cast<float>(wp[i]));
        if (bp) y = wide ? y + static_cast<double>(bp[i]) : double(float(y) + static_cast<float>(bp[i]));
        yr[i] = static_cast<T>(y);
      }
    }
  });
  return out;
}

}  // namespace at
