#include "sibling_executable.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "cli_app.hpp"

namespace kernelhub::cli {

namespace {
char** arguments = nullptr;
}  // namespace

void remember_arguments(char** argv) {
  arguments = argv;
}
char** remembered_arguments() {
  return arguments;
}

std::optional<std::filesystem::path> sibling_path(std::string_view executable) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  const std::filesystem::path sibling = self.parent_path() / executable;
  if (::access(sibling.c_str(), X_OK) != 0) return std::nullopt;
  return sibling;
}

int exec_sibling(std::string_view executable, std::string_view command, char** argv) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    std::fprintf(stderr, "kernelhub %.*s: error: cannot find this executable's folder (/proc/self/exe: %s)\n",
                 static_cast<int>(command.size()), command.data(), ec.message().c_str());
    return kExitFailure;
  }
  const std::filesystem::path sibling = self.parent_path() / executable;
  std::string program = sibling.string();
  argv[0] = program.data();
  ::execv(program.c_str(), argv);
  const int error = errno;
  std::fprintf(stderr,
               "kernelhub %.*s: error: cannot run `%s` (%s). `kernelhub %.*s` loads kernels with LibTorch in that "
               "executable, which belongs next to %s: `cmake --install` puts both in bin/; in a build tree, build "
               "the %.*s target\n",
               static_cast<int>(command.size()), command.data(), program.c_str(), std::strerror(error),
               static_cast<int>(command.size()), command.data(), self.c_str(), static_cast<int>(executable.size()),
               executable.data());
  return kExitFailure;
}

}  // namespace kernelhub::cli
