#include "kernel_state.hpp"
#include "kernelhub/fetch/internal/raise_for.hpp"
#include "kernelhub/internal/load.hpp"

namespace kernelhub {

namespace {

std::string schema_text(const c10::OperatorHandle& handle) {
  return loader::schema_text(handle.schema());
}

}  // namespace

Kernel::Kernel(std::shared_ptr<const State> state)
    : FetchedKernel(std::shared_ptr<const FetchedVariant>(state, &state->fetched)), state_(std::move(state)) {}

const std::vector<loader::OpInfo>& Kernel::ops() const {
  return state_->library->ops();
}
const std::string& Kernel::ns() const {
  return state_->library->ns();
}
const std::vector<Kernel>& Kernel::dependencies() const {
  return state_->dependencies;
}
const std::vector<std::string>& Kernel::fallbacks() const {
  return state_->fetched.fallbacks;
}

c10::OperatorHandle Kernel::checked(std::string_view name, const CppSignature& signature) const {
  const std::string qualified = ns() + "::" + std::string(name);
  const auto handle = c10::Dispatcher::singleton().findSchema({qualified, ""});
  if (!handle) {
    std::string listed;
    for (const auto& op : ops()) listed += (listed.empty() ? "" : ", ") + op.name;
    raise_for(Error{ErrorCode::kNotFound, "kernel `" + metadata().name + "` (" + variant() + ") has no op `" +
                                              std::string(name) +
                                              "`; its ops are: " + (listed.empty() ? std::string("none") : listed)});
  }
  if (auto why = signature_mismatch(handle->schema(), signature)) refuse(name, *handle, signature, *why);
  return *handle;
}

void Kernel::refuse(std::string_view name, const c10::OperatorHandle& handle, const CppSignature& signature,
                    std::string_view why) const {
  raise_for(Error{ErrorCode::kOpSchemaMismatch,
                  "op `" + std::string(name) + "` of kernel `" + metadata().name + "` cannot be called as `" +
                      signature.text + "`: its schema is `" + schema_text(handle) + "`:\n  " + std::string(why) +
                      "\nUse op<" + cpp_signature_for(handle.schema()) + ">(\"" + std::string(name) + "\")"});
}

void Kernel::call_boxed(std::string_view name, torch::jit::Stack& stack) const {
  const std::string qualified = ns() + "::" + std::string(name);
  const auto handle = c10::Dispatcher::singleton().findSchema({qualified, ""});
  if (!handle) (void)checked(name, CppSignature::of<void()>());  // raises NotFoundError listing the ops
  try {
    // Types and count against the schema, before the kernel sees the stack.
    handle->schema().checkAndNormalizeInputs(stack);
  } catch (const c10::Error& e) {
    // c10's message ends with the schema again, in its own notation: ours is given once, here.
    std::string why = e.what_without_backtrace();
    if (const auto declaration = why.find("\nDeclaration:"); declaration != std::string::npos) why.resize(declaration);
    raise_for(Error{ErrorCode::kOpSchemaMismatch, "op `" + std::string(name) + "` of kernel `" + metadata().name +
                                                      "` cannot be called with these arguments: its schema is `" +
                                                      schema_text(*handle) + "`: " + why});
  }
  handle->callBoxed(stack);
}

}  // namespace kernelhub
