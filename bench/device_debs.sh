#!/usr/bin/env bash
# Run here, before a device call: downloads into .debs/ (git-ignored; name it in the call's
# `carry`) the Debian development packages the GPU machine's image lacks, which
# bench/device_sysroot.sh unpacks there. About 5 MB; quick when they are already there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
packages=(libssl-dev libcurl4-openssl-dev nlohmann-json3-dev libcpp-httplib-dev libcpp-httplib0.11 libbrotli-dev
          zlib1g-dev libtomlplusplus-dev libtomlplusplus3 libcli11-dev pkg-config libpkgconf3 pkgconf pkgconf-bin)
mkdir -p .debs
missing=()
for p in "${packages[@]}"; do
  compgen -G ".debs/${p}_*.deb" >/dev/null || missing+=("$p")
done
if ((${#missing[@]})); then
  (cd .debs && apt-get download "${missing[@]}")
fi
echo "device_debs: $(ls .debs/*.deb | wc -l) packages in .debs/ ($(du -sh .debs | cut -f1))"
