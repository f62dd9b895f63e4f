// Overloaded: a visitor from lambdas, for std::visit over Reason (reason.hpp).
#pragma once

namespace kernelhub::resolver {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
// Written out for clang 14 (the fuzz build), which has no deduction for aggregates.
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace kernelhub::resolver
