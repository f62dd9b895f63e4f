#include "cli_words.hpp"

#include "kernelhub/fetch/internal/problem.hpp"

namespace kernelhub::cli {

std::string cli_message(const Error& error) {
  const Problem* problem = problem_of(error);
  if (const auto* offline = problem == nullptr ? nullptr : std::get_if<NotCachedOffline>(problem)) {
    return error.detail_context + offline->message("--revision <commit>");
  }
  if (const auto* unversioned = problem == nullptr ? nullptr : std::get_if<NoVersionGiven>(problem)) {
    return error.detail_context +
           unversioned->message("Give --version " + unversioned->example_version() + " (or --revision R)");
  }
  return error.message;
}

}  // namespace kernelhub::cli
