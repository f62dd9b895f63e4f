#include <variant>

#include "kernel_state.hpp"
#include "kernelhub/fetch/internal/raise_for.hpp"
#include "kernelhub/tvm_ffi.hpp"

namespace kernelhub::tvm_ffi {

const std::optional<Signature>& Function::signature() const {
  return library_->find(name_)->signature;
}

Value Function::call(std::span<const Argument> arguments, std::optional<void*> stream) const {
  auto outcome = library_->call(name_, arguments, {.stream = stream});
  if (!outcome) raise_for(outcome.error());
  if (auto* raised = std::get_if<tvm_ffi_loader::Runtime::Raised>(&*outcome)) {
    throw KernelRaisedError(name_, raised->kind, raised->message, raised->backtrace);
  }
  return std::get<Value>(std::move(*outcome));
}

Kernel::Kernel(std::shared_ptr<const State> state)
    : FetchedKernel(std::shared_ptr<const FetchedVariant>(state, &state->fetched)), state_(std::move(state)) {}

const std::vector<FunctionInfo>& Kernel::functions() const {
  return state_->library->functions();
}

Function Kernel::function(std::string_view name) const {
  const tvm_ffi_loader::KernelLibrary& library = *state_->library;
  if (library.find(name) != nullptr) return Function(state_->library, std::string(name));
  const std::string per_backend = std::string(name) + "_" + state_->backend;
  if (library.find(per_backend) != nullptr) return Function(state_->library, per_backend);
  std::string names;
  for (const auto& f : library.functions()) names += (names.empty() ? "" : ", ") + f.name;
  raise_for(Error{ErrorCode::kNotFound, "kernel variant `" + state_->fetched.variant + "` has no function `" +
                                            std::string(name) + "` (nor `" + per_backend +
                                            "`); its functions are: " + (names.empty() ? "none" : names)});
}

const std::string& Kernel::backend() const {
  return state_->backend;
}
const std::filesystem::path& Kernel::library_path() const {
  return state_->library->path();
}
std::string Kernel::runtime_version() const {
  return state_->runtime_version;
}
const std::filesystem::path& Kernel::runtime_path() const {
  return state_->library->runtime().location().path;
}
const std::string& Kernel::runtime_found_by() const {
  return state_->library->runtime().location().found_by;
}

}  // namespace kernelhub::tvm_ffi
