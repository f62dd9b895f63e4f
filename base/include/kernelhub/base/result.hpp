// Result<T>: a value or an Error, with the subset of std::expected's API that we use, so that
// moving to C++23 is an alias change. Status = Result<void>.
//
// Thread safety: a value type.
#pragma once

#include <cassert>
#include <utility>
#include <variant>

#include "kernelhub/base/error.hpp"

namespace kernelhub {

// Wraps an Error so that `return unexpected(err);` reads like std::expected.
struct Unexpected {
  Error error;
};
inline Unexpected unexpected(Error error) { return Unexpected{std::move(error)}; }
inline Unexpected unexpected(ErrorCode code, std::string message) {
  return Unexpected{Error{code, std::move(message)}};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Unexpected u) : state_(std::move(u.error)) {}  // NOLINT(google-explicit-constructor)

  bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    assert(has_value());
    return std::get<0>(state_);
  }
  const T& value() const& {
    assert(has_value());
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(has_value());
    return std::get<0>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    assert(!has_value());
    return std::get<1>(state_);
  }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Unexpected u) : error_(std::move(u.error)), ok_(false) {}  // NOLINT

  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const {
    assert(!ok_);
    return error_;
  }

 private:
  Error error_{ErrorCode::kInternal, {}};
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace kernelhub

// Propagates the error of a Result-returning expression, or binds its value.
#define KH_TRY_CONCAT_(a, b) a##b
#define KH_TRY_NAME_(line) KH_TRY_CONCAT_(kh_try_result_, line)
#define KH_ASSIGN_OR_RETURN(lhs, expr)                                        \
  auto KH_TRY_NAME_(__LINE__) = (expr);                                       \
  if (!KH_TRY_NAME_(__LINE__)) return ::kernelhub::unexpected(KH_TRY_NAME_(__LINE__).error()); \
  lhs = std::move(KH_TRY_NAME_(__LINE__)).value()
#define KH_RETURN_IF_ERROR(expr)                                                          \
  do {                                                                                    \
    auto kh_status_ = (expr);                                                             \
    if (!kh_status_) return ::kernelhub::unexpected(kh_status_.error());                  \
  } while (false)
