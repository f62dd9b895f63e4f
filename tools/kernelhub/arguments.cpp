#include "arguments.hpp"

namespace kernelhub::cli {

std::optional<std::string> Arguments::option(std::string_view name) const {
  auto it = options.find(name);
  if (it == options.end()) return std::nullopt;
  return it->second;
}

Arguments parse_arguments(std::span<const std::string> args, const ArgumentSpec& spec) {
  Arguments out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      out.positionals.insert(out.positionals.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (!arg.starts_with("--") || arg.size() == 2) {
      if (arg == "-h") {
        out.flags.insert("--help");
        continue;
      }
      out.positionals.push_back(arg);
      continue;
    }
    const std::size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    if (name == "--help" || spec.flags.contains(name)) {
      if (eq != std::string::npos) {
        out.error = "option `" + name + "` takes no value";
        return out;
      }
      out.flags.insert(name);
    } else if (spec.options.contains(name)) {
      if (eq != std::string::npos) {
        out.options[name] = arg.substr(eq + 1);
      } else if (i + 1 < args.size()) {
        out.options[name] = args[++i];
      } else {
        out.error = "option `" + name + "` needs a value";
        return out;
      }
    } else {
      out.error = "unknown option `" + name + "`";
      return out;
    }
  }
  return out;
}

}  // namespace kernelhub::cli
