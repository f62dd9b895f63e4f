#include "kernelhub/loader/internal/op_library.hpp"

#include <ATen/core/dispatch/Dispatcher.h>
#include <dlfcn.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>

#include "kernelhub/loader/internal/preflight.hpp"
#include "kernelhub/loader/internal/python_stub.hpp"

namespace kernelhub::loader {

std::string schema_text(const c10::FunctionSchema& schema) {
  std::ostringstream printed;
  printed << schema;
  // An alias set the schema wrote as `Tensor!` is anonymous, and c10 prints it as `Tensor($0! -> )`;
  // write it as the schema language does, `Tensor(a!)` ($0 → a, $1 → b, ...).
  static const std::regex anonymous(R"(\(\$([0-9]+)(!?) -> \))");
  std::string text = printed.str();
  std::string out;
  std::sregex_iterator it(text.begin(), text.end(), anonymous);
  std::size_t last = 0;
  for (; it != std::sregex_iterator(); ++it) {
    const int index = std::stoi((*it)[1].str());
    out += text.substr(last, static_cast<std::size_t>(it->position()) - last);
    out += "(" + (index < 26 ? std::string(1, static_cast<char>('a' + index)) : "$" + (*it)[1].str()) + (*it)[2].str() +
           ")";
    last = static_cast<std::size_t>(it->position() + it->length());
  }
  return out + text.substr(last);
}

std::vector<OpInfo> registered_ops(const std::string& ns) {
  std::vector<OpInfo> out;
  const std::string prefix = ns + "::";
  auto& dispatcher = c10::Dispatcher::singleton();
  for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
    if (!name.name.starts_with(prefix)) continue;
    auto handle = dispatcher.findSchema(name);
    if (!handle || !handle->hasSchema()) continue;
    std::string short_name = name.name.substr(prefix.size());
    if (!name.overload_name.empty()) short_name += "." + name.overload_name;
    out.push_back(OpInfo{std::move(short_name), schema_text(handle->schema())});
  }
  std::sort(out.begin(), out.end(), [](const OpInfo& a, const OpInfo& b) { return a.name < b.name; });
  return out;
}

Result<std::shared_ptr<const OpLibrary>> OpLibrary::open(const std::filesystem::path& path, const std::string& ns,
                                                         const EnvironmentSource& env,
                                                         const binary_format::ElfFile* elf) {
  // Process-wide: mirrors dlopen's loaded libraries and torch's op registry, both the process's;
  // a library cannot be loaded twice, whoever asks.
  static std::mutex mutex;
  static std::map<std::filesystem::path, std::shared_ptr<const OpLibrary>> libraries;
  std::lock_guard lock(mutex);

  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(path, ec);
  if (ec) return unexpected(os_error("cannot open `" + path.string() + "`", ec.value()));
  if (auto it = libraries.find(canonical); it != libraries.end()) {
    if (it->second->ns() != ns) {
      return unexpected(ErrorCode::kLoadFailed, "`" + canonical.string() + "` is already loaded with namespace `" +
                                                    it->second->ns() + "`, not `" + ns + "`");
    }
    return it->second;
  }

  KH_ASSIGN_OR_RETURN(binary_format::PreflightReport report, check_loadable(canonical, env, elf));
  if (report.needs_python_stub) KH_RETURN_IF_ERROR(ensure_python_stub_loaded());

  if (!registered_ops(ns).empty()) {
    return unexpected(ErrorCode::kLoadFailed, "op namespace `" + ns +
                                                  "` is already registered by another library in this process; "
                                                  "two kernels must not share a namespace (metadata.json `id`)");
  }
  dlerror();
  void* handle = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return unexpected(ErrorCode::kLoadFailed,
                      "dlopen of `" + canonical.string() + "` failed: " + (why ? why : "unknown error"));
  }
  std::vector<OpInfo> ops = registered_ops(ns);
  if (ops.empty()) {
    return unexpected(ErrorCode::kLoadFailed,
                      "`" + canonical.string() + "` loaded but registered no op under namespace `" + ns +
                          "`; metadata.json `id` must equal the TORCH_LIBRARY namespace of the library");
  }
  auto library = std::make_shared<const OpLibrary>(canonical, ns, handle, std::move(ops));
  libraries.emplace(canonical, library);
  return library;
}

}  // namespace kernelhub::loader
