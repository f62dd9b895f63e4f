// Argument and Value: what crosses the TVM-FFI C ABI in a call to a kernel function, as plain C++.
//
// An Argument is a view (TVM-FFI's AnyView): a DLPack tensor is passed by pointer and stays the
// caller's; the kernel may write into it (an output) and keeps no reference after the call. A Value
// is what a function returns; a tensor it returns is owned (OwnedTensor releases it).
//
// Thread safety: value types.
#pragma once

#include <dlpack/dlpack.h>

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace kernelhub::tvm_ffi_loader {

class Runtime;

// The kinds TVM-FFI distinguishes on the stack, as a function signature names them.
enum class ArgumentKind { kNone, kBool, kInt, kFloat, kString, kDevice, kDataType, kTensor };

// "None", "bool", "int", "float", "str", "Device", "DataType", "Tensor".
std::string_view to_string(ArgumentKind kind);

struct None {
  bool operator==(const None&) const = default;
};

class Argument {
 public:
  using Storage = std::variant<None, bool, std::int64_t, double, std::string, DLDevice, DLDataType, DLTensor*>;

  // Implicit, so that a call reads like the function's signature: f(&out, &x, std::nullopt, 1e-6).
  Argument() = default;
  Argument(None) {}                        // NOLINT(google-explicit-constructor)
  Argument(std::nullopt_t) {}              // NOLINT
  Argument(bool value) : value_(value) {}  // NOLINT
  template <std::integral I>
  requires(!std::same_as<I, bool>) Argument(I value) : value_(static_cast<std::int64_t>(value)) {}  // NOLINT
  template <std::floating_point F>
  Argument(F value) : value_(static_cast<double>(value)) {}         // NOLINT
  Argument(std::string value) : value_(std::move(value)) {}         // NOLINT
  Argument(std::string_view value) : value_(std::string(value)) {}  // NOLINT
  Argument(const char* value) : value_(std::string(value)) {}       // NOLINT
  Argument(DLDevice value) : value_(value) {}                       // NOLINT
  Argument(DLDataType value) : value_(value) {}                     // NOLINT
  Argument(DLTensor* value) : value_(value) {}                      // NOLINT
  Argument(DLTensor& value) : value_(&value) {}                     // NOLINT
  // A const tensor is passed the same way: TVM-FFI has no const, the kernel decides what it writes.
  Argument(const DLTensor* value) : value_(const_cast<DLTensor*>(value)) {}   // NOLINT
  Argument(const DLTensor& value) : value_(const_cast<DLTensor*>(&value)) {}  // NOLINT
  // An optional value: None when empty.
  template <typename T>
  Argument(const std::optional<T>& value) : Argument(value ? Argument(*value) : Argument()) {}  // NOLINT

  ArgumentKind kind() const;
  const Storage& storage() const { return value_; }
  // A short description for messages: "Tensor float32[2, 3] on cpu:0", "float 1e-06", "None".
  std::string describe() const;

 private:
  Storage value_;
};

// A tensor a function returned, released (TVMFFIObjectDecRef) when the last copy goes; `owner`
// (the kernel library, whose code may free it) stays loaded until then.
class OwnedTensor {
 public:
  OwnedTensor(std::shared_ptr<const Runtime> runtime, void* object, std::shared_ptr<const void> owner = {});
  const DLTensor& tensor() const;

 private:
  std::shared_ptr<void> object_;  // the TVM-FFI Tensor object; its deleter releases it
};

struct Value {
  std::variant<None, bool, std::int64_t, double, std::string, DLDevice, DLDataType, OwnedTensor> value;
  ArgumentKind kind() const;
  std::string describe() const;
};

// "float32", "bfloat16", "int64", ... as DLPack names a data type; "code<c>x<bits>" for others.
std::string dtype_name(const DLDataType& dtype);
// "cpu:0", "cuda:1", ...
std::string device_name(const DLDevice& device);

}  // namespace kernelhub::tvm_ffi_loader
