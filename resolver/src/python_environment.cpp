#include "kernelhub/resolver/internal/python_environment.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>

#include "kernelhub/base/internal/read_file.hpp"
#include "kernelhub/base/internal/unique_fd.hpp"
#include "kernelhub/resolver/version.hpp"

namespace kernelhub::resolver {

namespace {

namespace fs = std::filesystem;

bool directory_exists(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

std::string_view trim(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const std::size_t last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

// "3.11.7" (or "3.11.7.final.0") → "python3.11", the name of its lib/ folder; "3.13t" (an
// interpreter's name) → "python3.13t".
std::optional<std::string> lib_folder_of_version(std::string_view text) {
  auto version = Version::parse(text);
  if (!version) return std::nullopt;
  return "python" + version->to_string() + (text.ends_with('t') ? "t" : "");
}

// The lib/python3.X folders of `prefix`: the one named (or its free-threaded twin, python3.Xt),
// else every one there, newest first.
std::vector<std::string> lib_folders(const fs::path& prefix, const std::optional<std::string>& named) {
  if (named) return named->ends_with('t') ? std::vector<std::string>{*named} : std::vector{*named, *named + "t"};
  std::vector<std::pair<Version, std::string>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(prefix / "lib", ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("python")) continue;
    if (auto version = Version::parse(std::string_view(name).substr(6)); version && entry.is_directory(ec)) {
      found.emplace_back(*version, name);
    }
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> names;
  for (auto& [version, name] : found) names.push_back(std::move(name));
  return names;
}

// pyvenv.cfg's `key = value` lines (venv, virtualenv and uv all write one).
std::map<std::string, std::string, std::less<>> read_pyvenv_cfg(const fs::path& file) {
  std::map<std::string, std::string, std::less<>> values;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t equals = line.find('=');
    if (equals == std::string::npos) continue;
    values[std::string(trim(std::string_view(line).substr(0, equals)))] =
        std::string(trim(std::string_view(line).substr(equals + 1)));
  }
  return values;
}

void add_if_directory(std::vector<fs::path>& dirs, const fs::path& dir) {
  if (directory_exists(dir) && std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
}

// An installation's package directories (the header's order); `named` is its lib/python3.X.
std::vector<fs::path> installation_dirs(const fs::path& prefix, const std::optional<std::string>& named,
                                        const EnvironmentSource& env) {
  std::vector<fs::path> dirs;
  const auto folders = lib_folders(prefix, named);
  const auto home = env(env_vars::kHome);
  for (const std::string& folder : folders) {
    if (home && !env(env_vars::kPythonNoUserSite))
      add_if_directory(dirs, fs::path(*home) / ".local" / "lib" / folder / "site-packages");
    if (prefix == "/usr") add_if_directory(dirs, fs::path("/usr/local/lib") / folder / "dist-packages");
    add_if_directory(dirs, prefix / "lib" / folder / "site-packages");
    add_if_directory(dirs, prefix / "lib" / folder / "dist-packages");
  }
  add_if_directory(dirs, prefix / "lib" / "python3" / "dist-packages");  // Debian's python3-* packages
  return dirs;
}

// "python3.13t" → 3.13, free-threaded; none for a folder that names no minor ("python3").
std::optional<PythonRuntime> python_of_lib_folder(std::string_view name) {
  if (!name.starts_with("python")) return std::nullopt;
  const std::string_view text = name.substr(6);
  auto version = Version::parse(text);
  if (!version) return std::nullopt;
  return PythonRuntime{*version, text.ends_with('t'), false, std::nullopt};
}

}  // namespace

Version tvm_ffi_package_version(const fs::path& package) {
  auto text = read_file(package / "_version.py");
  if (!text) return Version{0, 0};
  std::string_view rest = *text;
  while (!rest.empty()) {
    const std::size_t end = rest.find('\n');
    const std::string_view line = trim(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (!line.starts_with("__version__")) continue;
    const std::size_t close = line.find_last_of("'\"");
    const std::size_t open = close == std::string_view::npos ? close : line.find_last_of("'\"", close - 1);
    if (open == std::string_view::npos) continue;
    if (auto version = Version::parse(line.substr(open + 1, close - open - 1))) return *version;
  }
  return Version{0, 0};
}

namespace {

// The header's `runtime`: `declared` is pyvenv.cfg's or the interpreter's version text, if any.
std::optional<PythonRuntime> runtime_of(const PythonEnvironment& python, const std::optional<std::string>& declared) {
  std::optional<PythonRuntime> runtime;
  for (const auto& dir : python.package_dirs) {
    if ((runtime = python_of_lib_folder(dir.parent_path().filename().string()))) break;
  }
  if (!runtime && declared) runtime = python_of_lib_folder("python" + *declared);
  if (!runtime) return std::nullopt;
  for (const auto& dir : python.package_dirs) {
    runtime->mlx = runtime->mlx || directory_exists(dir / "mlx");
    if (!runtime->tvm_ffi && directory_exists(dir / "tvm_ffi"))
      runtime->tvm_ffi = tvm_ffi_package_version(dir / "tvm_ffi");
  }
  return runtime;
}

PythonEnvironment environment_at(fs::path prefix, std::string found_by, std::optional<std::string> named,
                                 const EnvironmentSource& env, std::optional<std::string> interpreter_version = {}) {
  PythonEnvironment python{std::move(prefix), std::move(found_by), {}, std::nullopt};
  const fs::path cfg = python.prefix / "pyvenv.cfg";
  std::error_code ec;
  if (!fs::is_regular_file(cfg, ec)) {
    python.package_dirs = installation_dirs(python.prefix, named, env);
    python.runtime = runtime_of(python, interpreter_version);
    return python;
  }
  const auto values = read_pyvenv_cfg(cfg);
  std::optional<std::string> folder;
  std::optional<std::string> declared;
  for (const char* key : {"version", "version_info"}) {
    if (auto it = values.find(key); it != values.end() && !folder) {
      folder = lib_folder_of_version(it->second);
      declared = it->second;
    }
  }
  for (const std::string& name : lib_folders(python.prefix, folder)) {
    add_if_directory(python.package_dirs, python.prefix / "lib" / name / "site-packages");
  }
  const auto system = values.find("include-system-site-packages");
  const auto home = values.find("home");  // the base interpreter's bin/
  if (system != values.end() && system->second == "true" && home != values.end()) {
    for (auto& dir : installation_dirs(fs::path(home->second).parent_path(), folder, env)) {
      add_if_directory(python.package_dirs, dir);
    }
  }
  python.runtime = runtime_of(python, declared);
  return python;
}

std::optional<fs::path> find_on_path(const std::string& path_variable, std::string_view name) {
  std::string_view rest = path_variable;
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (dir.empty()) continue;  // the current directory: not where an interpreter is looked for
    const fs::path candidate = fs::path(dir) / name;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

bool is_script(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  char magic[2] = {};
  return in.read(magic, 2) && magic[0] == '#' && magic[1] == '!';
}

// Runs `script -S -c 'import sys; print(sys.prefix)'` and returns what it printed (a wrapper
// such as a pyenv shim execs the interpreter it stands for, so this is that interpreter's prefix).
Result<fs::path> prefix_printed_by(const fs::path& script) {
  constexpr auto kTimeout = std::chrono::seconds(10);
  auto failed = [&](const std::string& why) {
    return unexpected(ErrorCode::kIo, "`" + script.string() + " -S -c 'import sys; print(sys.prefix)'` " + why);
  };
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return failed("could not start: no pipe");
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::string program = script.string(), no_site = "-S", command = "-c", code = "import sys; print(sys.prefix)";
  char* argv[] = {program.data(), no_site.data(), command.data(), code.data(), nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv, inherited_environment());
  posix_spawn_file_actions_destroy(&actions);
  write_end.reset();
  if (spawned != 0) return failed("could not start");
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + kTimeout;
  bool timed_out = false;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd readable{read_end.get(), POLLIN, 0};
    if (left.count() <= 0 || ::poll(&readable, 1, static_cast<int>(left.count())) == 0) {
      timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    char buffer[512];
    const ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (timed_out) return failed("did not answer within 10 s");
  const fs::path prefix(trim(out));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || prefix.empty() || !directory_exists(prefix)) {
    return failed("did not print a Python prefix");
  }
  return prefix;
}

}  // namespace

Result<PythonEnvironment> find_python_environment(const EnvironmentSource& env) {
  if (auto venv = env(env_vars::kVirtualEnv)) {
    if (!directory_exists(*venv)) {
      return unexpected(ErrorCode::kNotFound, "VIRTUAL_ENV=`" + *venv + "` is not a directory");
    }
    return environment_at(*venv, std::string(env_vars::kVirtualEnv), std::nullopt, env);
  }
  const std::string path_variable = env(env_vars::kPath).value_or("");
  const auto python = find_on_path(path_variable, "python3");
  if (!python) {
    return unexpected(ErrorCode::kNotFound,
                      "VIRTUAL_ENV is not set and there is no python3 on PATH (`" + path_variable + "`)");
  }
  std::string found_by = "python3 on PATH: " + python->string();
  if (is_script(*python)) {
    KH_ASSIGN_OR_RETURN(fs::path prefix, prefix_printed_by(*python));
    return environment_at(std::move(prefix), std::move(found_by), std::nullopt, env);
  }
  // A virtual environment's python3 is a link to its base interpreter: its own bin/ says which
  // environment it is.
  const fs::path unresolved_prefix = python->parent_path().parent_path();
  std::error_code ec;
  if (fs::is_regular_file(unresolved_prefix / "pyvenv.cfg", ec)) {
    return environment_at(unresolved_prefix, std::move(found_by), std::nullopt, env);
  }
  const fs::path interpreter = fs::canonical(*python, ec);
  if (ec) return environment_at(unresolved_prefix, std::move(found_by), std::nullopt, env);
  // Its name (python3.11, after the links) says which lib/python3.X is its own.
  const std::string name = interpreter.filename().string();
  std::optional<std::string> named;
  std::optional<std::string> version;
  if (name.starts_with("python")) {
    version = name.substr(6);
    named = lib_folder_of_version(*version);
  }
  return environment_at(interpreter.parent_path().parent_path(), std::move(found_by), named, env, version);
}

}  // namespace kernelhub::resolver
