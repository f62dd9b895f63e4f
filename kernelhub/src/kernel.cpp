#include "kernelhub/kernel.hpp"

#include "kernelhub/errors.hpp"

namespace kernelhub {

namespace {

std::string schema_text(const c10::OperatorHandle& handle) {
  return loader::schema_text(handle.schema());
}

}  // namespace

c10::OperatorHandle Kernel::find_op(std::string_view name) const {
  const std::string qualified = ns() + "::" + std::string(name);
  if (auto handle = c10::Dispatcher::singleton().findSchema({qualified, ""})) return *handle;
  std::string listed;
  for (const auto& op : ops()) listed += (listed.empty() ? "" : ", ") + op.name;
  raise_for(Error{ErrorCode::kNotFound, "kernel `" + metadata_.name + "` (" + variant_ + ") has no op `" +
                                            std::string(name) +
                                            "`; its ops are: " + (listed.empty() ? std::string("none") : listed)});
}

void Kernel::check_signature(std::string_view name, const c10::OperatorHandle& handle,
                             const CppSignature& signature) const {
  if (auto why = signature_mismatch(handle.schema(), signature))
    raise_signature_mismatch(name, handle, signature, *why);
}

void Kernel::raise_signature_mismatch(std::string_view name, const c10::OperatorHandle& handle,
                                      const CppSignature& signature, std::string_view why) const {
  raise_for(Error{ErrorCode::kOpSchemaMismatch,
                  "op `" + std::string(name) + "` of kernel `" + metadata_.name + "` cannot be called as `" +
                      signature.text + "`: its schema is `" + schema_text(handle) + "`:\n  " + std::string(why) +
                      "\nUse op<" + cpp_signature_for(handle.schema()) + ">(\"" + std::string(name) + "\")"});
}

void Kernel::call_boxed(std::string_view name, torch::jit::Stack& stack) const {
  const c10::OperatorHandle handle = find_op(name);
  try {
    // Types and count against the schema, before the kernel sees the stack.
    handle.schema().checkAndNormalizeInputs(stack);
  } catch (const c10::Error& e) {
    // c10's message ends with the schema again, in its own notation: ours is given once, here.
    std::string why = e.what_without_backtrace();
    if (const auto declaration = why.find("\nDeclaration:"); declaration != std::string::npos) why.resize(declaration);
    raise_for(Error{ErrorCode::kOpSchemaMismatch, "op `" + std::string(name) + "` of kernel `" + metadata_.name +
                                                      "` cannot be called with these arguments: its schema is `" +
                                                      schema_text(handle) + "`: " + why});
  }
  handle.callBoxed(stack);
}

}  // namespace kernelhub
