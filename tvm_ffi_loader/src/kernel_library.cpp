#include "kernelhub/tvm_ffi_loader/internal/kernel_library.hpp"

#include <dlfcn.h>
#include <tvm/ffi/c_api.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "kernelhub/tvm_ffi_loader/internal/preflight.hpp"
#include "shared_library.hpp"

namespace kernelhub::tvm_ffi_loader {

namespace {

constexpr std::string_view kFunctionPrefix = "__tvm_ffi_";
constexpr std::string_view kMetadataPrefix = "__tvm_ffi__metadata_";

TVMFFIAny to_any(const Argument& argument) {
  TVMFFIAny any{};
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, None>) {
          any.type_index = kTVMFFINone;
        } else if constexpr (std::is_same_v<T, bool>) {
          any.type_index = kTVMFFIBool;
          any.v_int64 = v ? 1 : 0;
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          any.type_index = kTVMFFIInt;
          any.v_int64 = v;
        } else if constexpr (std::is_same_v<T, double>) {
          any.type_index = kTVMFFIFloat;
          any.v_float64 = v;
        } else if constexpr (std::is_same_v<T, std::string>) {
          any.type_index = kTVMFFIRawStr;
          any.v_c_str = v.c_str();
        } else if constexpr (std::is_same_v<T, DLDevice>) {
          any.type_index = kTVMFFIDevice;
          any.v_device = v;
        } else if constexpr (std::is_same_v<T, DLDataType>) {
          any.type_index = kTVMFFIDataType;
          any.v_dtype = v;
        } else {
          any.type_index = kTVMFFIDLTensorPtr;
          any.v_ptr = v;
        }
      },
      argument.storage());
  return any;
}

// Takes ownership of `any` (an owned TVM-FFI Any, as a call returns it). A tensor keeps `library`
// (its deleter may be the kernel's code) and the runtime alive.
Result<Value> from_any(const TVMFFIAny& any, const std::shared_ptr<const Runtime>& runtime,
                       std::shared_ptr<const void> library) {
  switch (any.type_index) {
    case kTVMFFINone: return Value{None{}};
    case kTVMFFIBool: return Value{any.v_int64 != 0};
    case kTVMFFIInt: return Value{std::int64_t{any.v_int64}};
    case kTVMFFIFloat: return Value{any.v_float64};
    case kTVMFFIDevice: return Value{any.v_device};
    case kTVMFFIDataType: return Value{any.v_dtype};
    case kTVMFFISmallStr:
    case kTVMFFISmallBytes: return Value{std::string(any.v_bytes, any.small_str_len)};
    case kTVMFFIStr:
    case kTVMFFIBytes: {
      const TVMFFIByteArray* bytes = TVMFFIBytesGetByteArrayPtr(any.v_obj);
      Value out{std::string(bytes->data, bytes->size)};
      runtime->release(any.v_obj);
      return out;
    }
    case kTVMFFITensor: return Value{OwnedTensor(runtime, any.v_obj, std::move(library))};
    default: break;
  }
  if (any.type_index >= kTVMFFIStaticObjectBegin) runtime->release(any.v_obj);
  return unexpected(ErrorCode::kInvalidArgument, "the function returned a value of TVM-FFI type index " +
                                                     std::to_string(any.type_index) +
                                                     ", which kernelhub does not represent (it was released)");
}

// Sets the stream of each GPU device among the tensor arguments for the call, and restores the
// previous ones when it goes out of scope.
class StreamScope {
 public:
  StreamScope(const Runtime& runtime) : runtime_(runtime) {}
  ~StreamScope() {
    for (auto it = previous_.rbegin(); it != previous_.rend(); ++it) {
      (void)runtime_.set_stream(it->first.first, it->first.second, it->second);
    }
  }
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

  Status set(std::span<const Argument> arguments, void* stream) {
    std::set<std::pair<std::int32_t, std::int32_t>> devices;
    for (const Argument& argument : arguments) {
      if (const auto* tensor = std::get_if<DLTensor*>(&argument.storage()); tensor && *tensor) {
        if ((*tensor)->device.device_type != kDLCPU) {
          devices.emplace((*tensor)->device.device_type, (*tensor)->device.device_id);
        }
      }
    }
    for (const auto& device : devices) {
      KH_ASSIGN_OR_RETURN(void* previous, runtime_.set_stream(device.first, device.second, stream));
      previous_.emplace_back(device, previous);
    }
    return {};
  }

 private:
  const Runtime& runtime_;
  std::vector<std::pair<std::pair<std::int32_t, std::int32_t>, void*>> previous_;
};

void read_signature(TVMFFISafeCallType metadata, const std::shared_ptr<const Runtime>& runtime, FunctionInfo& info) {
  TVMFFIAny result{};
  result.type_index = kTVMFFINone;
  if (metadata(nullptr, nullptr, 0, &result) != 0) {
    const Runtime::Raised raised = runtime->take_raised();
    info.metadata_problem = "its metadata function raised " + raised.kind + ": " + raised.message;
    return;
  }
  auto value = from_any(result, runtime, nullptr);
  const auto* text = value ? std::get_if<std::string>(&value->value) : nullptr;
  if (text == nullptr) {
    info.metadata_problem =
        "its metadata function returned " + (value ? value->describe() : value.error().message) + ", not a JSON string";
    return;
  }
  if (auto signature = Signature::parse_metadata(*text)) {
    info.signature = std::move(*signature);
  } else {
    info.metadata_problem = signature.error().message;
  }
}

}  // namespace

struct KernelLibrary::Handles {
  SharedLibrary library;
  std::map<std::string, TVMFFISafeCallType, std::less<>> entries;
};

KernelLibrary::KernelLibrary(std::filesystem::path path, std::shared_ptr<const Runtime> runtime,
                             std::vector<FunctionInfo> functions, std::unique_ptr<Handles> handles)
    : path_(std::move(path)),
      runtime_(std::move(runtime)),
      functions_(std::move(functions)),
      handles_(std::move(handles)) {}

KernelLibrary::~KernelLibrary() = default;

Result<std::shared_ptr<const KernelLibrary>> KernelLibrary::load(
    const std::filesystem::path& path, std::shared_ptr<const Runtime> runtime, const resolver::Version& tvm_ffi_version,
    const std::string& variant, const EnvironmentSource& env, const binary_format::ElfFile* elf) {
  // Process-wide: mirrors dlopen's loaded libraries, which are the process's.
  static std::mutex mutex;
  static std::map<std::filesystem::path, std::weak_ptr<const KernelLibrary>> loaded;
  std::lock_guard lock(mutex);

  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(path, ec);
  if (ec) return unexpected(os_error("cannot open `" + path.string() + "`", ec.value()));
  if (auto it = loaded.find(canonical); it != loaded.end()) {
    if (auto library = it->second.lock()) return library;
  }

  std::optional<binary_format::ElfFile> read;
  if (elf == nullptr) {
    KH_ASSIGN_OR_RETURN(binary_format::ElfFile file, binary_format::ElfFile::read(canonical));
    read = std::move(file);
    elf = &*read;
  }
  KH_RETURN_IF_ERROR(runtime->require(tvm_ffi_version, variant));
  KH_RETURN_IF_ERROR(preflight(canonical, *elf, env));
  KH_RETURN_IF_ERROR(runtime->make_global());

  auto handles = std::make_unique<Handles>();
  KH_ASSIGN_OR_RETURN(handles->library, SharedLibrary::open(canonical, RTLD_NOW | RTLD_LOCAL));
  std::vector<FunctionInfo> functions;
  for (const std::string& name : exported_functions(*elf)) {
    const auto entry =
        reinterpret_cast<TVMFFISafeCallType>(handles->library.symbol((std::string(kFunctionPrefix) + name).c_str()));
    if (entry == nullptr) continue;
    handles->entries.emplace(name, entry);
    FunctionInfo info{name, std::nullopt, {}};
    // The signature, from the metadata function: called like any function, with no arguments.
    const auto metadata =
        reinterpret_cast<TVMFFISafeCallType>(handles->library.symbol((std::string(kMetadataPrefix) + name).c_str()));
    if (metadata != nullptr) read_signature(metadata, runtime, info);
    functions.push_back(std::move(info));
  }
  auto library = std::make_shared<const KernelLibrary>(canonical, runtime, std::move(functions), std::move(handles));
  loaded[canonical] = library;
  return library;
}

const FunctionInfo* KernelLibrary::find(std::string_view name) const {
  auto it = std::find_if(functions_.begin(), functions_.end(), [&](const FunctionInfo& f) { return f.name == name; });
  return it == functions_.end() ? nullptr : &*it;
}

Result<Outcome> KernelLibrary::call(std::string_view name, std::span<const Argument> arguments,
                                    const CallOptions& options) const {
  const FunctionInfo* info = find(name);
  auto entry = handles_->entries.find(name);
  if (info == nullptr || entry == handles_->entries.end()) {
    std::string names;
    for (const auto& f : functions_) names += (names.empty() ? "" : ", ") + f.name;
    return unexpected(Error{ErrorCode::kNotFound, "`" + path_.filename().string() + "` has no TVM-FFI function `" +
                                                      std::string(name) +
                                                      "`; it has: " + (names.empty() ? std::string("none") : names)});
  }
  if (info->signature) KH_RETURN_IF_ERROR(info->signature->check(name, arguments));
  std::vector<TVMFFIAny> packed;
  packed.reserve(arguments.size());
  for (const Argument& argument : arguments) packed.push_back(to_any(argument));

  StreamScope streams(*runtime_);
  if (options.stream) KH_RETURN_IF_ERROR(streams.set(arguments, *options.stream));
  TVMFFIAny result{};
  result.type_index = kTVMFFINone;
  if (entry->second(nullptr, packed.data(), static_cast<std::int32_t>(packed.size()), &result) != 0) {
    return Outcome{runtime_->take_raised()};
  }
  KH_ASSIGN_OR_RETURN(Value value, from_any(result, runtime_, shared_from_this()));
  return Outcome{std::move(value)};
}

}  // namespace kernelhub::tvm_ffi_loader
