// The trusted roots compiled into the library (sigstore/data/, embedded by
// sigstore/embed_data.cmake at build time).
#pragma once

#include <string_view>

namespace kernelhub::sigstore::embedded {

std::string_view public_good_trusted_root();  // sigstore/data/public-good-trusted-root.json
std::string_view staging_trusted_root();      // sigstore/data/staging-trusted-root.json

}  // namespace kernelhub::sigstore::embedded
