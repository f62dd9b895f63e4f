#include "kernelhub/tvm_ffi_loader/argument.hpp"

#include <tvm/ffi/c_api.h>

#include <sstream>

#include "kernelhub/tvm_ffi_loader/internal/runtime.hpp"

namespace kernelhub::tvm_ffi_loader {

namespace {

std::string shape_text(const DLTensor& t) {
  std::string out = "[";
  for (int i = 0; i < t.ndim; ++i) out += (i ? ", " : "") + std::to_string(t.shape[i]);
  return out + "]";
}

// One overload per alternative of Argument and Value: its kind, and its text in messages.
ArgumentKind kind_of(None) {
  return ArgumentKind::kNone;
}
ArgumentKind kind_of(bool) {
  return ArgumentKind::kBool;
}
ArgumentKind kind_of(std::int64_t) {
  return ArgumentKind::kInt;
}
ArgumentKind kind_of(double) {
  return ArgumentKind::kFloat;
}
ArgumentKind kind_of(const std::string&) {
  return ArgumentKind::kString;
}
ArgumentKind kind_of(DLDevice) {
  return ArgumentKind::kDevice;
}
ArgumentKind kind_of(DLDataType) {
  return ArgumentKind::kDataType;
}
ArgumentKind kind_of(const DLTensor*) {
  return ArgumentKind::kTensor;
}
ArgumentKind kind_of(const OwnedTensor&) {
  return ArgumentKind::kTensor;
}

std::string text_of(None) {
  return "None";
}
std::string text_of(bool v) {
  return v ? "bool true" : "bool false";
}
std::string text_of(std::int64_t v) {
  return "int " + std::to_string(v);
}
std::string text_of(double v) {
  std::ostringstream out;
  out << "float " << v;
  return out.str();
}
std::string text_of(const std::string& v) {
  return "str \"" + v + "\"";
}
std::string text_of(DLDevice v) {
  return "Device " + device_name(v);
}
std::string text_of(DLDataType v) {
  return "DataType " + dtype_name(v);
}
std::string text_of(const DLTensor* t) {
  if (t == nullptr) return "Tensor (null pointer)";
  return "Tensor " + dtype_name(t->dtype) + shape_text(*t) + " on " + device_name(t->device);
}
std::string text_of(const OwnedTensor& v) {
  return text_of(&v.tensor());
}

}  // namespace

std::string_view to_string(ArgumentKind kind) {
  switch (kind) {
    case ArgumentKind::kNone: return "None";
    case ArgumentKind::kBool: return "bool";
    case ArgumentKind::kInt: return "int";
    case ArgumentKind::kFloat: return "float";
    case ArgumentKind::kString: return "str";
    case ArgumentKind::kDevice: return "Device";
    case ArgumentKind::kDataType: return "DataType";
    case ArgumentKind::kTensor: return "Tensor";
  }
  return "?";
}

std::string dtype_name(const DLDataType& dtype) {
  std::string base;
  switch (dtype.code) {
    case kDLFloat: base = "float"; break;
    case kDLInt: base = "int"; break;
    case kDLUInt: base = "uint"; break;
    case kDLBfloat: base = "bfloat"; break;
    case kDLBool: return dtype.lanes == 1 ? "bool" : "bool x" + std::to_string(dtype.lanes);
    default: base = "code" + std::to_string(dtype.code) + "x"; break;
  }
  std::string out = base + std::to_string(dtype.bits);
  if (dtype.lanes != 1) out += "x" + std::to_string(dtype.lanes);
  return out;
}

std::string device_name(const DLDevice& device) {
  std::string type;
  switch (device.device_type) {
    case kDLCPU: type = "cpu"; break;
    case kDLCUDA: type = "cuda"; break;
    case kDLCUDAHost: type = "cuda_host"; break;
    case kDLROCM: type = "rocm"; break;
    case kDLMetal: type = "metal"; break;
    case kDLOneAPI: type = "xpu"; break;
    default: type = "device" + std::to_string(static_cast<int>(device.device_type)); break;
  }
  return type + ":" + std::to_string(device.device_id);
}

ArgumentKind Argument::kind() const {
  return std::visit([](const auto& v) { return kind_of(v); }, value_);
}

std::string Argument::describe() const {
  return std::visit([](const auto& v) { return text_of(v); }, value_);
}

OwnedTensor::OwnedTensor(std::shared_ptr<const Runtime> runtime, void* object, std::shared_ptr<const void> owner)
    : object_(object, [runtime = std::move(runtime), owner = std::move(owner)](void* o) { runtime->release(o); }) {}

const DLTensor& OwnedTensor::tensor() const {
  return *TVMFFITensorGetDLTensorPtr(object_.get());
}

ArgumentKind Value::kind() const {
  return std::visit([](const auto& v) { return kind_of(v); }, value);
}

std::string Value::describe() const {
  return std::visit([](const auto& v) { return text_of(v); }, value);
}

}  // namespace kernelhub::tvm_ffi_loader
