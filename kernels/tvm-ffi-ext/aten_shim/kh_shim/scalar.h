// The scalar types of the ATen shim: c10::Half and c10::BFloat16 with c10's rounding (round to
// nearest even, NaN kept), the ScalarType enum with c10's names, at::opmath_type, and c10's
// host/device macros. Host and device code (nvcc) see the same types the torch build sees, so the
// kernels' device code is the same code in both builds.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <type_traits>

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define C10_HOST_DEVICE __host__ __device__
#else
#define C10_HOST_DEVICE
#endif
// c10's device-side assertion, always on: a failed one stops the kernel with the condition's text.
#if defined(__CUDACC__)
#include <cassert>
#define CUDA_KERNEL_ASSERT(cond)                                                            \
  do {                                                                                      \
    if (!(cond)) __assert_fail(#cond, __FILE__, static_cast<unsigned>(__LINE__), __func__); \
  } while (false)
#endif
#define C10_LIKELY(x) __builtin_expect(static_cast<bool>(x), 1)
#define C10_UNLIKELY(x) __builtin_expect(static_cast<bool>(x), 0)

namespace kh_shim {

C10_HOST_DEVICE inline std::uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

C10_HOST_DEVICE inline float bits_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// IEEE binary16 from binary32, rounded to nearest even; NaN stays NaN, overflow is infinity.
inline std::uint16_t half_from_float(float f) {
  const std::uint32_t u = float_bits(f);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);   // NaN
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (abs < 0x38800000u) {  // subnormal half (or zero): scale into the 10-bit field, round to even
    const std::uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const int shift = 126 - static_cast<int>(abs >> 23);  // 14..24+ for exponents below -14
    if (shift > 24) return static_cast<std::uint16_t>(sign);
    const std::uint32_t half = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
    const std::uint32_t midpoint = 1u << (shift - 1);
    const std::uint32_t rounded = half + ((rest > midpoint || (rest == midpoint && (half & 1u))) ? 1u : 0u);
    return static_cast<std::uint16_t>(sign | rounded);
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped bits to even.
  const std::uint32_t rebiased = abs - (112u << 23);
  const std::uint32_t rounded = rebiased + 0xfffu + ((rebiased >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | (rounded >> 13));
}

inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return bits_float(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  if (mantissa == 0) return bits_float(sign);
  int e = -1;  // subnormal: normalise
  do {
    ++e;
    mantissa <<= 1;
  } while ((mantissa & 0x400u) == 0);
  return bits_float(sign | ((112u - static_cast<std::uint32_t>(e)) << 23) | ((mantissa & 0x3ffu) << 13));
}

}  // namespace kh_shim

namespace c10 {

struct alignas(2) Half {
  std::uint16_t x = 0;
  Half() = default;
  struct from_bits_t {};
  C10_HOST_DEVICE constexpr Half(std::uint16_t bits, from_bits_t) : x(bits) {}
  C10_HOST_DEVICE Half(float value) {  // NOLINT(google-explicit-constructor)
#if defined(__CUDA_ARCH__)
    x = __half_as_ushort(__float2half(value));
#else
    x = kh_shim::half_from_float(value);
#endif
  }
  C10_HOST_DEVICE operator float() const {  // NOLINT(google-explicit-constructor)
#if defined(__CUDA_ARCH__)
    return __half2float(__ushort_as_half(x));
#else
    return kh_shim::half_to_float(x);
#endif
  }
};

struct alignas(2) BFloat16 {
  std::uint16_t x = 0;
  BFloat16() = default;
  struct from_bits_t {};
  C10_HOST_DEVICE constexpr BFloat16(std::uint16_t bits, from_bits_t) : x(bits) {}
  C10_HOST_DEVICE BFloat16(float value) {  // NOLINT(google-explicit-constructor)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    x = __bfloat16_as_ushort(__float2bfloat16(value));
#else
    // Round to nearest even; NaN is the quiet NaN c10 writes.
    if (value != value) {
      x = 0x7fc0u;
    } else {
      const std::uint32_t u = kh_shim::float_bits(value);
      x = static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
#endif
  }
  C10_HOST_DEVICE operator float() const {  // NOLINT(google-explicit-constructor)
    return kh_shim::bits_float(static_cast<std::uint32_t>(x) << 16);
  }
};

// c10's arithmetic: two halves compute in float and round once; with a float or double the result
// is that type (so that mixed expressions are not ambiguous).
#define KH_SHIM_ARITHMETIC(T)                                \
  C10_HOST_DEVICE inline T operator+(T a, T b) {             \
    return T(static_cast<float>(a) + static_cast<float>(b)); \
  }                                                          \
  C10_HOST_DEVICE inline T operator-(T a, T b) {             \
    return T(static_cast<float>(a) - static_cast<float>(b)); \
  }                                                          \
  C10_HOST_DEVICE inline T operator*(T a, T b) {             \
    return T(static_cast<float>(a) * static_cast<float>(b)); \
  }                                                          \
  C10_HOST_DEVICE inline T operator/(T a, T b) {             \
    return T(static_cast<float>(a) / static_cast<float>(b)); \
  }                                                          \
  C10_HOST_DEVICE inline T operator-(T a) {                  \
    return T(-static_cast<float>(a));                        \
  }                                                          \
  C10_HOST_DEVICE inline float operator+(T a, float b) {     \
    return static_cast<float>(a) + b;                        \
  }                                                          \
  C10_HOST_DEVICE inline float operator-(T a, float b) {     \
    return static_cast<float>(a) - b;                        \
  }                                                          \
  C10_HOST_DEVICE inline float operator*(T a, float b) {     \
    return static_cast<float>(a) * b;                        \
  }                                                          \
  C10_HOST_DEVICE inline float operator/(T a, float b) {     \
    return static_cast<float>(a) / b;                        \
  }                                                          \
  C10_HOST_DEVICE inline float operator+(float a, T b) {     \
    return a + static_cast<float>(b);                        \
  }                                                          \
  C10_HOST_DEVICE inline float operator-(float a, T b) {     \
    return a - static_cast<float>(b);                        \
  }                                                          \
  C10_HOST_DEVICE inline float operator*(float a, T b) {     \
    return a * static_cast<float>(b);                        \
  }                                                          \
  C10_HOST_DEVICE inline float operator/(float a, T b) {     \
    return a / static_cast<float>(b);                        \
  }                                                          \
  C10_HOST_DEVICE inline double operator+(T a, double b) {   \
    return static_cast<double>(a) + b;                       \
  }                                                          \
  C10_HOST_DEVICE inline double operator*(T a, double b) {   \
    return static_cast<double>(a) * b;                       \
  }                                                          \
  C10_HOST_DEVICE inline double operator+(double a, T b) {   \
    return a + static_cast<double>(b);                       \
  }                                                          \
  C10_HOST_DEVICE inline double operator*(double a, T b) {   \
    return a * static_cast<double>(b);                       \
  }
KH_SHIM_ARITHMETIC(Half)
KH_SHIM_ARITHMETIC(BFloat16)
#undef KH_SHIM_ARITHMETIC

// c10's ScalarType, with its numbering and the names it prints ("Float", "BFloat16").
enum class ScalarType : std::int8_t {
  Byte = 0,
  Char = 1,
  Short = 2,
  Int = 3,
  Long = 4,
  Half = 5,
  Float = 6,
  Double = 7,
  Bool = 11,
  BFloat16 = 15,
  Undefined = 127,
};

inline const char* toString(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return "Byte";
    case ScalarType::Char: return "Char";
    case ScalarType::Short: return "Short";
    case ScalarType::Int: return "Int";
    case ScalarType::Long: return "Long";
    case ScalarType::Half: return "Half";
    case ScalarType::Float: return "Float";
    case ScalarType::Double: return "Double";
    case ScalarType::Bool: return "Bool";
    case ScalarType::BFloat16: return "BFloat16";
    case ScalarType::Undefined: break;
  }
  return "Undefined";
}

inline std::ostream& operator<<(std::ostream& out, ScalarType t) {
  return out << toString(t);
}

inline std::int64_t elementSize(ScalarType t) {
  switch (t) {
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Bool: return 1;
    case ScalarType::Short:
    case ScalarType::Half:
    case ScalarType::BFloat16: return 2;
    case ScalarType::Int:
    case ScalarType::Float: return 4;
    case ScalarType::Long:
    case ScalarType::Double: return 8;
    case ScalarType::Undefined: break;
  }
  return 0;
}

template <typename T>
struct CppTypeToScalarType;
template <>
struct CppTypeToScalarType<float> : std::integral_constant<ScalarType, ScalarType::Float> {};
template <>
struct CppTypeToScalarType<double> : std::integral_constant<ScalarType, ScalarType::Double> {};
template <>
struct CppTypeToScalarType<Half> : std::integral_constant<ScalarType, ScalarType::Half> {};
template <>
struct CppTypeToScalarType<BFloat16> : std::integral_constant<ScalarType, ScalarType::BFloat16> {};
template <>
struct CppTypeToScalarType<std::int64_t> : std::integral_constant<ScalarType, ScalarType::Long> {};
template <>
struct CppTypeToScalarType<std::int32_t> : std::integral_constant<ScalarType, ScalarType::Int> {};

}  // namespace c10

namespace at {

using c10::BFloat16;
using c10::Half;
using c10::ScalarType;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kInt = ScalarType::Int;

// The type ATen computes a T's arithmetic in: float for the half types, T otherwise.
template <typename T>
struct OpMathType {
  using type = T;
};
template <>
struct OpMathType<Half> {
  using type = float;
};
template <>
struct OpMathType<BFloat16> {
  using type = float;
};
template <typename T>
using opmath_type = typename OpMathType<T>::type;

}  // namespace at
