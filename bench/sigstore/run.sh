#!/usr/bin/env bash
# bench/sigstore/run.sh [BUILD_DIR]: sigstore_bench over three real bundles of the Sigstore
# conformance suite (vendored: shared/vendor/sigstore-conformance-*.tar.gz, found by walking up
# from the repository root): a Rekor v1 message signature (public-good root), a Rekor v2 entry with
# an RFC 3161 timestamp (the suite's staging-based root) and an in-toto DSSE attestation. The root
# is always given as a file, so "cold" includes parsing it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build}"
bench="$build/bin/sigstore_bench"
[ -x "$bench" ] || { echo "build it first: cmake --build $build --target sigstore_bench" >&2; exit 1; }
vendor=""
for dir in "$root" $(cd "$root" && while [ "$PWD" != / ]; do cd ..; echo "$PWD"; done); do
  if [ -d "$dir/shared/vendor" ]; then vendor="$dir/shared/vendor"; break; fi
done
[ -n "$vendor" ] || { echo "no shared/vendor above $root: the conformance bundles are not here" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
tar -xzf "$vendor"/sigstore-conformance-*.tar.gz -C "$tmp"
cases="$tmp/test/assets/bundle-verify"
identity="https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main"
issuer="https://token.actions.githubusercontent.com"
public_good="$root/sigstore/data/public-good-trusted-root.json"
for spec in "happy-path-v0.3:$public_good" \
            "rekor2-timestamp-with-embedded-cert:$cases/rekor2-timestamp-with-embedded-cert/trusted_root.json" \
            "happy-path-intoto-in-dsse-v3:$public_good"; do
  name="${spec%%:*}"
  trusted_root="${spec#*:}"
  artifact="$cases/$name/artifact"
  [ -f "$artifact" ] || artifact="$cases/a.txt"
  "$bench" "$cases/$name/bundle.sigstore.json" "$artifact" "$trusted_root" --identity "$identity" --issuer "$issuer" \
    --iterations "${ITERATIONS:-200}"
done
