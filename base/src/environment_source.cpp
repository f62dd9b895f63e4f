#include "kernelhub/base/environment_source.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>

extern char** environ;

namespace kernelhub {

namespace {

void check_listed(std::string_view name) {
  if (find_environment_variable(name) == nullptr) {
    throw std::logic_error("`" + std::string(name) +
                           "` is not an environment variable kernelhub reads: add it to the table in "
                           "base/src/environment_variables.cpp (and docs/ENVIRONMENT.md)");
  }
}

}  // namespace

EnvironmentSource::EnvironmentSource() : values_(std::make_shared<const Values>()) {}

EnvironmentSource::EnvironmentSource(Values values) {
  for (const auto& [name, value] : values) check_listed(name);
  std::erase_if(values, [](const auto& entry) { return entry.second.empty(); });
  values_ = std::make_shared<const Values>(std::move(values));
}

std::optional<std::string> EnvironmentSource::operator()(std::string_view name) const {
  check_listed(name);
  const auto it = values_->find(name);
  if (it == values_->end()) return std::nullopt;
  return it->second;
}

EnvironmentSource EnvironmentSource::with(std::string_view name, std::string value) const {
  Values values = *values_;
  values.insert_or_assign(std::string(name), std::move(value));
  return EnvironmentSource(std::move(values));
}

EnvironmentSource process_environment() {
  EnvironmentSource::Values values;
  for (const EnvironmentVariable& variable : environment_variables()) {
    if (const char* value = std::getenv(std::string(variable.name).c_str())) values.emplace(variable.name, value);
  }
  return EnvironmentSource(std::move(values));
}

EnvironmentSource map_environment(EnvironmentSource::Values values) {
  return EnvironmentSource(std::move(values));
}

char* const* inherited_environment() {
  return environ;
}

}  // namespace kernelhub
