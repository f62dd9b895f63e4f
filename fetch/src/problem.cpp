#include "kernelhub/fetch/internal/problem.hpp"

#include <utility>

namespace kernelhub {

namespace {

// "v1, v2", or "none".
std::string join_versions(const std::vector<std::string>& versions) {
  std::string listed;
  for (const auto& v : versions) listed += (listed.empty() ? "" : ", ") + v;
  return listed.empty() ? std::string("none") : listed;
}

const Problem* problem_in(const std::shared_ptr<const ErrorDetail>& detail) {
  const auto* problem = dynamic_cast<const ProblemDetail*>(detail.get());
  return problem == nullptr ? nullptr : &problem->problem;
}

}  // namespace

std::string VersionNotFound::message() const {
  return "Version " + std::to_string(version) + " of `" + repo +
         "` not found, available versions: " + join_versions(versions);
}

std::string NotCachedOffline::not_cached() const {
  if (version) {
    return "Version " + std::to_string(*version) + " of '" + repo +
           "' is not available in the local cache and Hugging Face Hub is in offline mode.";
  }
  return "Cannot resolve revision '" + revision + "' of '" + repo +
         "' to a commit: the ref is not in the local cache and Hugging Face Hub is in offline mode.";
}

std::string NotCachedOffline::message(std::string_view commit_option) const {
  return not_cached() + " Download the kernel while online first, or give the commit itself (" +
         std::string(commit_option) + "); the cache at `" + cache_root.string() + "` holds " +
         (refs.empty() ? std::string("nothing for this repo") : "its refs " + join_versions(refs)) + ".";
}

std::string NoVersionGiven::example_version() const {
  return versions && !versions->empty() ? versions->back().substr(1) : "1";
}

std::string NoVersionGiven::message(std::string_view how_to_give) const {
  return "a kernel version or revision must be given for `" + repo +
         "`; available versions: " + (versions ? join_versions(*versions) : "none") + ". " + std::string(how_to_give);
}

Error problem_error(ErrorCode code, std::string message, Problem problem, Missing missing) {
  return Error{code, std::move(message), missing, NetworkFailure::kUnspecified,
               std::make_shared<const ProblemDetail>(std::move(problem))};
}

Warning problem_warning(std::string message, Problem problem) {
  return Warning{std::move(message), std::make_shared<const ProblemDetail>(std::move(problem))};
}

const Problem* problem_of(const Error& error) {
  return problem_in(error.detail);
}

const Problem* problem_of(const Warning& warning) {
  return problem_in(warning.detail);
}

}  // namespace kernelhub
