// The kernels package's words for what a fetch found (fetch/internal/kernelhub/fetch/internal/problem.hpp),
// which the Python shim raises and warns with verbatim (kernels 0.19.1: validate.py, digest.py,
// verify.py, locking.py, load.py, _versions.py, resolver.py, _internals/deps.py), because code and
// tests written against kernels match on them. kernelhub's own words stay in Error::message.
//
// Thread safety: free functions over values.
#pragma once

#include <optional>
#include <string>

#include "kernelhub/base/error.hpp"
#include "kernelhub/fetch/internal/problem.hpp"
#include "kernelhub/fetch/internal/variant_checks.hpp"

namespace kernelhub::kernels_words {

// kernels' words for `problem`; none where kernels says it as kernelhub does (or has no words of
// its own for it).
std::optional<std::string> of(const Problem& problem);

// The message the shim raises for `error`: the contexts added since its Problem, then kernels'
// words for it; the message as it is where there are none.
std::string message(const Error& error);

// The text of a warning the shim says, likewise.
std::string message(const Warning& warning);

// One line: "Missing file: a.py", "File hash mismatch for a.py: expected: X, got: Y".
std::string describe(const DigestViolation& violation);

}  // namespace kernelhub::kernels_words
