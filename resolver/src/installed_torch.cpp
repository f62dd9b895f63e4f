#include "kernelhub/resolver/internal/installed_torch.hpp"

#include "kernelhub/base/internal/read_file.hpp"

namespace kernelhub::resolver {

namespace {

std::string_view trim(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const std::size_t last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// `name[: annotation] = 'value'` → name and value; a value of None (or anything but a string
// literal) gives no value.
struct Assignment {
  std::string_view name;
  std::optional<std::string> value;
};

std::optional<Assignment> read_assignment(std::string_view line) {
  const std::size_t equals = line.find('=');
  if (equals == std::string_view::npos) return std::nullopt;
  std::string_view name = line.substr(0, equals);
  name = trim(name.substr(0, name.find(':')));
  const std::string_view value = trim(line.substr(equals + 1));
  Assignment assignment{name, std::nullopt};
  if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') && value.back() == value.front()) {
    assignment.value = std::string(value.substr(1, value.size() - 2));
  }
  return assignment;
}

// The C++ ABI TorchConfig.cmake passes to consumers, when it still names one.
std::optional<bool> cxx11_abi_of_cmake_config(const std::filesystem::path& torch_dir) {
  auto text = read_file(torch_dir / "share" / "cmake" / "Torch" / "TorchConfig.cmake");
  if (!text) return std::nullopt;
  constexpr std::string_view kFlag = "_GLIBCXX_USE_CXX11_ABI=";
  const std::size_t at = text->find(kFlag);
  if (at == std::string::npos || at + kFlag.size() >= text->size()) return std::nullopt;
  const char value = (*text)[at + kFlag.size()];
  if (value != '0' && value != '1') return std::nullopt;
  return value == '1';
}

}  // namespace

Result<TorchVersionInfo> parse_version_py(std::string_view text) {
  TorchVersionInfo info;
  bool has_version = false;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    auto assignment = read_assignment(line);
    if (!assignment) continue;
    if (assignment->name == "__version__" && assignment->value) {
      info.version = *assignment->value;
      has_version = true;
    } else if (assignment->name == "cuda") {
      info.cuda = assignment->value;
    } else if (assignment->name == "hip") {
      info.hip = assignment->value;
    } else if (assignment->name == "rocm") {
      info.rocm = assignment->value;
    } else if (assignment->name == "xpu") {
      info.xpu = assignment->value;
    }
  }
  if (!has_version) {
    return unexpected(ErrorCode::kCorruptFile, "no `__version__ = '...'` line; torch's version.py has one");
  }
  return info;
}

Result<InstalledTorch> read_installed_torch(const std::filesystem::path& dir) {
  const std::filesystem::path file = dir / "version.py";
  auto text = read_file(file);
  if (!text) return unexpected(text.error());
  auto corrupt = [&](const Error& error) {
    return unexpected(ErrorCode::kCorruptFile, "`" + file.string() + "` is not torch's version.py: " + error.message +
                                                   "; reinstall torch, or name the torch with KERNELHUB_TORCH");
  };
  auto info = parse_version_py(*text);
  if (!info) return corrupt(info.error());
  auto runtime = info->runtime();
  if (!runtime) return corrupt(runtime.error());
  runtime->cxx11_abi = cxx11_abi_of_cmake_config(dir).value_or(wheels_use_cxx11_abi(*runtime->version));
  return InstalledTorch{dir, *runtime};
}

}  // namespace kernelhub::resolver
