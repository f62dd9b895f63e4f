#include "kernelhub/base/environment_source.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace kernelhub {

EnvironmentSource process_environment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
  };
}

EnvironmentSource map_environment(std::map<std::string, std::string, std::less<>> values) {
  return [values = std::move(values)](std::string_view name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end() || it->second.empty()) return std::nullopt;
    return it->second;
  };
}

bool is_truthy(const std::optional<std::string>& value) {
  if (!value) return false;
  std::string upper = *value;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return upper == "1" || upper == "ON" || upper == "YES" || upper == "TRUE";
}

}  // namespace kernelhub
