#include "kernelhub/fetch/fetched_kernel.hpp"

#include "kernelhub/fetch/internal/fetch.hpp"

namespace kernelhub {

const std::string& FetchedKernel::variant() const {
  return fetched_->variant;
}
const std::string& FetchedKernel::revision() const {
  return fetched_->revision;
}
const std::filesystem::path& FetchedKernel::path() const {
  return fetched_->path;
}
const Metadata& FetchedKernel::metadata() const {
  return fetched_->metadata;
}
const std::vector<resolver::Decision>& FetchedKernel::decisions() const {
  return fetched_->decisions;
}
const LoadTimings& FetchedKernel::timings() const {
  return fetched_->timings;
}
std::vector<std::string> FetchedKernel::warnings() const {
  std::vector<std::string> said;
  said.reserve(fetched_->warnings.size());
  for (const Warning& warning : fetched_->warnings) said.push_back(warning.message);
  return said;
}

}  // namespace kernelhub
