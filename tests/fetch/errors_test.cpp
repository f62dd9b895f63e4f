#include "kernelhub/fetch/internal/raise_for.hpp"

#include <catch2/catch.hpp>

namespace kernelhub {
namespace {

TEST_CASE("raise_for throws NotFoundError that says what was missing") {
  try {
    raise_for(Error{ErrorCode::kNotFound, "Version 7 of `a/b` not found", Missing::kVersion});
    FAIL("raise_for returned");
  } catch (const NotFoundError& e) {
    CHECK(e.missing() == Missing::kVersion);
    CHECK(e.code() == ErrorCode::kNotFound);
    CHECK(std::string(e.what()) == "Version 7 of `a/b` not found");
  }
  // A local path: nothing more specific to say.
  try {
    raise_for(Error{ErrorCode::kNotFound, "kernel directory `/x` does not exist"});
    FAIL("raise_for returned");
  } catch (const NotFoundError& e) {
    CHECK(e.missing() == Missing::kUnspecified);
  }
}

TEST_CASE("Missing has stable names, empty for unspecified") {
  CHECK(to_string(Missing::kRepo) == "repo");
  CHECK(to_string(Missing::kRevision) == "revision");
  CHECK(to_string(Missing::kVersion) == "version");
  CHECK(to_string(Missing::kFile) == "file");
  CHECK(to_string(Missing::kUnspecified).empty());
}

}  // namespace
}  // namespace kernelhub
