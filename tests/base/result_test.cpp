#include "kernelhub/base/result.hpp"

#include <catch2/catch.hpp>

namespace kernelhub {
namespace {

Result<int> half(int x) {
  if (x % 2 != 0) return unexpected(ErrorCode::kInvalidArgument, std::to_string(x) + " is odd");
  return x / 2;
}

Result<int> quarter(int x) {
  KH_ASSIGN_OR_RETURN(int h, half(x));
  return half(h);
}

TEST_CASE("Result carries a value or an error, and KH_ASSIGN_OR_RETURN propagates the error") {
  REQUIRE(quarter(8).value() == 2);
  const auto odd = quarter(6);
  REQUIRE_FALSE(odd.has_value());
  CHECK(odd.error().code == ErrorCode::kInvalidArgument);
  CHECK(odd.error().message == "3 is odd");
}

TEST_CASE("Error::with_context prefixes the message and keeps the code") {
  const Error e = Error{ErrorCode::kNotFound, "no such file"}.with_context("reading `x`");
  CHECK(e.code == ErrorCode::kNotFound);
  CHECK(e.message == "reading `x`: no such file");
  CHECK(to_string(ErrorCode::kNoCompatibleVariant) == "no_compatible_variant");
}

TEST_CASE("os_error maps ENOENT to kNotFound and other errnos to kIo") {
  CHECK(os_error("open", ENOENT).code == ErrorCode::kNotFound);
  CHECK(os_error("open", EACCES).code == ErrorCode::kIo);
  CHECK(os_error("open `f`", EACCES).message == "open `f`: Permission denied");
}

}  // namespace
}  // namespace kernelhub
