// EnvironmentSource: the configuration a call runs with, as data: the values of the environment
// variables of environment_variables.hpp, read once when the source is made.
//
// The edge of each entry point (get_kernel, a CLI command, a call into the Python binding) makes
// one with process_environment() and passes it down; no layer reads the environment itself, and
// a variable set after that is seen by the next call, not by this one. Tests pass
// map_environment({...}), so they never patch the process environment.
//
// Only the table's names exist: looking up, or putting in a map, a name the table does not list
// is a programming error (std::logic_error), so no variable can be read that docs/ENVIRONMENT.md
// does not list.
//
// Thread safety: immutable once made; copies share the values.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kernelhub/base/environment_variables.hpp"

namespace kernelhub {

class EnvironmentSource {
 public:
  using Values = std::map<std::string, std::string, std::less<>>;

  // No variable set.
  EnvironmentSource();
  // These values (an empty one counts as unset). Throws std::logic_error naming a name that
  // is not in the table.
  explicit EnvironmentSource(Values values);

  // The value of `name`; none when unset or empty, as in huggingface_hub. Throws
  // std::logic_error when `name` is not in the table.
  std::optional<std::string> operator()(std::string_view name) const;

  // This configuration with `name` set to `value`: a command-line flag that stands for a
  // variable (`--torch` for KERNELHUB_TORCH). Throws as the constructor does.
  EnvironmentSource with(std::string_view name, std::string value) const;

 private:
  std::shared_ptr<const Values> values_;
};

// The process environment, every variable of the table read now, once.
EnvironmentSource process_environment();

// Fixed values, for tests and for describing another machine.
EnvironmentSource map_environment(EnvironmentSource::Values values);

// The process environment block as is, for a child process that inherits it (posix_spawn's
// envp): passed on whole, not read.
char* const* inherited_environment();

// huggingface_hub's truthy set for boolean variables: 1, ON, YES, TRUE (any case).
bool is_truthy(const std::optional<std::string>& value);

}  // namespace kernelhub
