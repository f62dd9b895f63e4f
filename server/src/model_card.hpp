// The checks behind POST /api/validate-yaml: huggingface_hub sends a README.md before committing
// it (and RepoCard.validate() sends one on request) and refuses the commit on errors.
//
// The Hub's full metadata schema is not public; this checks what its documentation states and
// its clients' tests show (docs/SERVER.md, "README metadata"): a missing or empty metadata block
// is a warning; YAML that is not a mapping of keys, a `license` outside the Hub's list of license
// identifiers, a `model-index` or `tags` of the wrong shape are errors.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kernelhub::server {

struct CardCheck {
  std::vector<std::string> errors;    // each makes the answer a 400
  std::vector<std::string> warnings;  // shown to the user, commit goes on
};

// `content` is the whole README.md.
CardCheck check_model_card(std::string_view content);

}  // namespace kernelhub::server
