#include "cli_app.hpp"

#include "cli_words.hpp"
#include "error_json.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>

namespace kernelhub::cli {

namespace {

constexpr const char* kHelpFlag = "-h,--help";
constexpr const char* kHelpText = "print this help and exit";

// CLI11's layout, with the usage line first (as Unix tools put it), lower-case headings, a
// command's one-line summary in the list of commands, and what an option requires or excludes
// said after its description rather than in the name column.
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() {
    label("Usage", "usage");
    label("Positionals", "arguments");
    column_width(28);
  }

  void set_summary(const std::string& command, std::string summary) { summaries_[command] = std::move(summary); }

  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    if (mode == CLI::AppFormatMode::Sub) return make_expanded(app);
    std::stringstream out;
    out << make_usage(app, name) << '\n' << make_description(app);
    out << make_positionals(app) << make_groups(app, mode) << make_subcommands(app, mode);
    out << '\n' << make_footer(app);
    return out.str();
  }

  std::string make_subcommand(const CLI::App* command) const override {
    const auto summary = summaries_.find(command->get_name());
    std::stringstream out;
    CLI::detail::format_help(out, command->get_name(),
                             summary != summaries_.end() ? summary->second : command->get_description(), column_width_);
    return out.str();
  }

  std::string make_option_opts(const CLI::Option* option) const override {
    if (option->get_positional()) return {};
    if (!option->get_option_text().empty()) return " " + option->get_option_text();
    if (option->get_type_size() == 0) return {};  // a flag
    return " " + get_label(option->get_type_name());
  }

  std::string make_option_desc(const CLI::Option* option) const override {
    std::string text = option->get_description();
    if (option->get_required() && !option->get_positional()) text += " (required)";
    if (!option->get_excludes().empty()) {
      std::string others;
      for (const CLI::Option* other : option->get_excludes())
        others += (others.empty() ? "" : ", ") + other->get_name();
      text += " (not with " + others + ")";
    }
    return text;
  }

 private:
  std::map<std::string, std::string, std::less<>> summaries_;
};

// Whether the command line asks for --json: a usage error then prints its error object too.
bool json_asked = false;

// The subcommand the arguments went to, or `app` itself.
const CLI::App& selected(const CLI::App& app) {
  const CLI::App* at = &app;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  return *at;
}

}  // namespace

void apply_conventions(CLI::App& app) {
  app.formatter(std::make_shared<HelpFormatter>());
  app.option_defaults()->group("options")->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.option_defaults()->disable_flag_override();  // `--json=1` is a mistake, not a value
  app.set_help_flag(kHelpFlag, kHelpText);
}

CLI::App& add_command(CLI::App& app, const std::string& name, const std::string& summary) {
  CLI::App& command = *app.add_subcommand(name, summary);
  command.group("commands");
  command.set_help_flag(kHelpFlag, kHelpText);  // again, now in the "options" group it inherited
  if (auto formatter = std::dynamic_pointer_cast<HelpFormatter>(app.get_formatter())) {
    formatter->set_summary(name, summary);
  }
  return command;
}

CLI::Validator whole_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
          return "`" + text + "` is not a whole number (decimal digits only)";
        }
        text.erase(0, std::min(text.find_first_not_of('0'), text.size() - 1));  // 007 is 7, not octal
        return {};
      },
      "");
}

std::string command_path(const CLI::App& command) {
  std::string path = command.get_name();
  for (const CLI::App* parent = command.get_parent(); parent != nullptr; parent = parent->get_parent()) {
    path = parent->get_name() + " " + path;
  }
  return path;
}

int exit_status(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return kExitUsage;
    case ErrorCode::kNotFound: return kExitNotFound;
    case ErrorCode::kNoCompatibleVariant:
    case ErrorCode::kIncompatibleBinary:
    case ErrorCode::kClientTooOld: return kExitNoVariant;
    case ErrorCode::kNetwork: return kExitUnreachable;
    case ErrorCode::kOfflineMiss: return kExitOfflineMiss;
    case ErrorCode::kUnauthorized:
    case ErrorCode::kGated: return kExitAccess;
    case ErrorCode::kUntrustedPublisher:
    case ErrorCode::kBadSignature:
    case ErrorCode::kMissingSignature: return kExitUntrusted;
    case ErrorCode::kIntegrityMismatch:
    case ErrorCode::kCorruptFile:
    case ErrorCode::kDependencyCycle: return kExitIntegrity;
    case ErrorCode::kLoadFailed:
    case ErrorCode::kIo:
    case ErrorCode::kOpSchemaMismatch:
    case ErrorCode::kKernelRaised:
    case ErrorCode::kInternal: return kExitFailure;
  }
  return kExitFailure;
}

int fail(std::string_view command, const Error& error, bool json) {
  // A message may quote names from a Hub: never an escape sequence to the terminal (printable.hpp).
  std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(command.size()), command.data(),
               printable(cli_message(error)).c_str());
  if (json) std::printf("%s\n", error_json(error).dump(2).c_str());
  return exit_status(error.code);
}

void say_fallbacks(std::string_view command, const std::vector<std::string>& fallbacks) {
  for (const std::string& note : fallbacks) {
    std::fprintf(stderr, "%.*s: note: %s\n", static_cast<int>(command.size()), command.data(), printable(note).c_str());
  }
}

std::optional<int> parse(CLI::App& app, int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) json_asked = json_asked || std::string_view(argv[i]) == "--json";
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::CallForVersion& version) {
    std::printf("%s\n", version.what());
    return kExitOk;
  } catch (const CLI::ParseError& error) {
    return usage_error(selected(app), error.what());
  }
}

int usage_error(const CLI::App& command, std::string_view why) {
  const std::string name = command_path(command);
  const auto formatter = std::dynamic_pointer_cast<CLI::Formatter>(command.get_formatter());
  std::string usage = formatter ? formatter->make_usage(&command, name) : "usage: " + name;
  while (!usage.empty() && usage.back() == '\n') usage.pop_back();
  std::fprintf(stderr, "%s: error: %s\n%s (`%s --help` for every option)\n", name.c_str(), printable(why).c_str(),
               usage.c_str(), name.c_str());
  if (json_asked) {
    std::printf("%s\n", error_json(Error{ErrorCode::kInvalidArgument, std::string(why)}).dump(2).c_str());
  }
  return kExitUsage;
}

}  // namespace kernelhub::cli
