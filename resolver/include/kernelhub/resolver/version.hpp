// Version: a major.minor pair, as variant names and environments use them (torch 2.15,
// CUDA 13.0, glibc 2.36, oneAPI 2025.3).
#pragma once

#include <compare>
#include <string>
#include <string_view>

#include "kernelhub/base/result.hpp"

namespace kernelhub::resolver {

struct Version {
  int major = 0;
  int minor = 0;

  // Parses "M.m" or "M.m.p..." (the rest after minor is ignored, so "2.15.0+cu132" is 2.15).
  static Result<Version> parse(std::string_view text);
  std::string to_string() const;  // "M.m"
  auto operator<=>(const Version&) const = default;
};

// The dotted release at the start of a version string, each number without leading zeros, as
// Python's packaging prints Version(text): "6.4.43482" from "6.4.43482-0f2d60242", "6.4.43" from
// "6.4.043"; empty when the text does not start with a number.
std::string release_text(std::string_view text);

}  // namespace kernelhub::resolver
