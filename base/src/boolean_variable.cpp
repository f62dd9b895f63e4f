#include "kernelhub/base/internal/boolean_variable.hpp"

#include <algorithm>
#include <cctype>

#include "kernelhub/base/environment_source.hpp"

namespace kernelhub {

bool flag_or(const std::optional<std::string>& value, bool otherwise) {
  if (!value) return otherwise;
  std::string upper = *value;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper == "1" || upper == "ON" || upper == "YES" || upper == "TRUE") return true;
  if (upper == "0" || upper == "OFF" || upper == "NO" || upper == "FALSE") return false;
  return otherwise;
}

bool is_truthy(const std::optional<std::string>& value) {
  return flag_or(value, false);
}

}  // namespace kernelhub
