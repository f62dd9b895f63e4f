#!/usr/bin/env bash
# The portable toolchain: what the release artifacts (the manylinux_2_28 wheel, the CLI tarball)
# are built with, so that they run on glibc 2.28 (RHEL/Rocky 8, Ubuntu 20.04, Amazon Linux 2023)
# and newer.
#
#   scripts/portable_toolchain.sh      build it if missing; print the CMake toolchain file
#
# - Compilers: zig's clang (PyPI's ziglang, in .venv) for x86_64-linux-gnu.2.28, or another target
#   (KERNELHUB_PORTABLE_TARGET=aarch64-linux-gnu.2.28: the aarch64 artifacts, scripts/aarch64.sh):
#   it links against glibc 2.28's symbol versions whatever glibc the build machine has, and uses no
#   header or library of the build machine.
# - The C++ runtime: LLVM's libc++ (zig's), linked statically and kept local to each artifact
#   (_core exports only PyInit__core: python/src/core/exports.map; an executable exports nothing).
#   Not GCC 8-compatible libstdc++ symbols: zig has no libstdc++, GCC 8's is not to be had here
#   (Debian 12's is GCC 12's, up to GLIBCXX_3.4.30), and a static libstdc++ inside a module that
#   torch's libstdc++.so shares a process with would be a second copy of the same symbols and
#   global state (locale, iostream, exception types). libc++ lives in its own namespace
#   (std::__1), so the artifacts need no GLIBCXX version at all and nothing binds across. What
#   that asks: no C++ object crosses into torch's code; _core hands Python only strings, numbers
#   and Python objects, and the CLI links no torch.
# - Libraries, built from Debian 12's source packages (Debian's patches applied) with those
#   compilers, static: OpenSSL (OPENSSLDIR /etc/ssl, so the system's CA certificates are found
#   where Debian/Ubuntu (certs/), RHEL/Fedora/Alpine/Arch (cert.pem) keep them; SSL_CERT_FILE and
#   SSL_CERT_DIR still apply) and libcurl (HTTP(S) only, with OpenSSL). The header-only ones
#   (nlohmann-json, CLI11, cpp-httplib) from their source packages too; toml++'s headers from
#   libtomlplusplus-dev (the mirror lacks its source), used header-only.
#
# Everything lives outside the checkout in ${KERNELHUB_TOOLS_CACHE:-$HOME/.cache/kernelhub}/
# portable-<target>-<key>, <key> hashing this script, zig's version and the source packages'
# versions: a warm machine reuses it, any change of input builds a new one. A lock makes a second
# checkout wait for the first; .complete marks a finished prefix. build-times.txt in it says how
# long each piece took.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="${KERNELHUB_PORTABLE_TARGET:-x86_64-linux-gnu.2.28}"
arch="${target%%-*}"
cache="${KERNELHUB_TOOLS_CACHE:-$HOME/.cache/kernelhub}"
jobs="${JOBS:-$(nproc)}"
sources=(openssl curl nlohmann-json3 cli11 cpp-httplib)

say() { printf '\033[1m[portable]\033[0m %s\n' "$*" >&2; }

zig="$(echo "$(readlink -f "$root/.venv")"/lib/python3*/site-packages/ziglang/zig)"
if [ ! -x "$zig" ]; then
  say "no zig in .venv (PyPI's ziglang, requirements-dev.txt): run scripts/bootstrap.sh --test"
  exit 1
fi

# Debian's source packages: a deb-src entry beside the deb ones, once.
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
ensure_deb_src() {
  if apt-get source --print-uris -qq openssl >/dev/null 2>&1; then
    return 0
  fi
  say "adding deb-src entries for Debian's source packages (/etc/apt/sources.list.d/kernelhub-deb-src.sources)"
  sed -n 's/^Types: deb$/Types: deb-src/p; /^URIs:/p; /^Suites:/p; /^Components:/p; /^Signed-By:/p; /^$/p' \
    /etc/apt/sources.list.d/debian.sources | $sudo tee /etc/apt/sources.list.d/kernelhub-deb-src.sources >/dev/null
  $sudo apt-get update -qq
}
ensure_deb_src
# The source packages, downloaded once into $cache/debian-src: for each, the newest version whose
# files the mirror serves (a security update's source can lag behind its binaries there).
downloads="$cache/debian-src"
mkdir -p "$downloads"
download_source() {
  local name="$1" version
  for version in $(apt-cache showsrc "$name" | sed -n 's/^Version: //p' | sort -rV | uniq); do
    if (cd "$downloads" && apt-get source --download-only -qq "$name=$version" >/dev/null 2>&1); then
      echo "$downloads/$(apt-get source --print-uris -qq "$name=$version" | awk '$2 ~ /\.dsc$/ {print $2; exit}')"
      return 0
    fi
  done
  say "no source of $name could be downloaded (apt-get source $name)"
  return 1
}
dscs=()
for s in "${sources[@]}"; do
  dsc="$(download_source "$s")" || exit 1
  dscs+=("$dsc")
done
toml_version="$(dpkg-query -W -f='${Version}' libtomlplusplus-dev)"
# How each piece is built. These, with the sources and zig, are the prefix's key: a change here
# (raise `recipe` for one that the options do not show, such as a change in the steps below)
# builds a new prefix; a change of comments does not.
recipe=1
# no-autoload-config: another distribution's openssl.cnf (OpenSSL 1.1's, its crypto policies) is
# not ours to read. no-module/no-engine: nothing is loaded at run time.
case "$arch" in
  x86_64 | aarch64) openssl_target="linux-$arch" ;;
  *) say "no OpenSSL target for $target: x86_64-linux-gnu.2.28 and aarch64-linux-gnu.2.28 are known" && exit 2 ;;
esac
openssl_options=("$openssl_target" --libdir=lib --openssldir=/etc/ssl no-shared no-module no-engine no-tests
                 no-autoload-config -fPIC)
# HTTP(S) only. No CA bundle path compiled in: OpenSSL's defaults (OPENSSLDIR above).
curl_options=(-DOPENSSL_USE_STATIC_LIBS=ON -DCURL_USE_OPENSSL=ON -DHTTP_ONLY=ON -DCURL_DISABLE_LDAP=ON
              -DCURL_ZLIB=OFF -DCURL_BROTLI=OFF -DCURL_ZSTD=OFF -DUSE_NGHTTP2=OFF -DUSE_LIBIDN2=OFF
              -DCURL_USE_LIBSSH2=OFF -DCURL_USE_LIBPSL=OFF -DCURL_CA_BUNDLE=none -DCURL_CA_PATH=none
              -DCURL_CA_FALLBACK=ON -DBUILD_CURL_EXE=OFF -DENABLE_MANUAL=OFF -DCURL_DISABLE_ALTSVC=ON)
key="$( (declare -p recipe openssl_options curl_options; "$zig" version; echo "$target"; basename -a "${dscs[@]}"
        echo "$toml_version") | sha256sum | cut -c1-16)"
prefix="$cache/portable-$target-$key"
mkdir -p "$cache"
exec 9>"$prefix.lock"
flock 9
# Compiler wrappers: CMake, OpenSSL's Configure and ccache each take one executable. They name
# the zig of this checkout's .venv, written again on every run: the key holds zig's version, not
# where it is, so a prefix outlives the environment that built it.
write_wrappers() {
  local tool
  mkdir -p "$prefix/bin"
  for tool in cc c++ ar ranlib; do
    case "$tool" in
      cc | c++) printf '#!/bin/sh\nexec "%s" %s -target %s "$@"\n' "$zig" "$tool" "$target" ;;
      *) printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$zig" "$tool" ;;
    esac >"$prefix/bin/.$tool.new"
    chmod +x "$prefix/bin/.$tool.new"
    mv -f "$prefix/bin/.$tool.new" "$prefix/bin/$tool"
  done
}
if [ -f "$prefix/.complete" ]; then
  [ "$(sed -n 's/^exec "\(.*\)" cc .*/\1/p' "$prefix/bin/cc")" = "$zig" ] || write_wrappers
  echo "$prefix/toolchain.cmake"
  exit 0
fi

say "building the portable toolchain for $target in $prefix (first time only)"
rm -rf "$prefix"
mkdir -p "$prefix/bin" "$prefix/src"
times="$prefix/build-times.txt"
# Each piece's wall and CPU time (user + system, of all its processes): the CPU time is what it
# costs a machine whatever else runs there.
timed() {
  local what="$1" report="$prefix/.timed"
  shift
  { TIMEFORMAT='%R s wall, %U s user + %S s system'; time "$@" 2>&3; } 3>&2 2>"$report"
  echo "$what: $(tail -1 "$report")" >>"$times"
  say "$what: $(tail -1 "$report")"
}

write_wrappers

# zig builds libc++, libc++abi and libunwind for the target once (in its own cache, ~/.cache/zig).
warm_zig() {
  printf '#include <string>\nint main() { return static_cast<int>(std::string("zig").size()) - 3; }\n' >"$prefix/src/warm.cpp"
  "$prefix/bin/c++" -std=c++20 -O2 "$prefix/src/warm.cpp" -o "$prefix/src/warm"
  if [ "$arch" = "$(uname -m)" ]; then "$prefix/src/warm"; fi  # another machine's program is only linked
}
timed "zig's libc++ for $target" warm_zig

unpack_sources() {
  local dsc
  for dsc in "${dscs[@]}"; do
    (cd "$prefix/src" && dpkg-source --no-check -x "$dsc" >/dev/null)
  done
}
timed "unpacking the sources ($(basename -a "${dscs[@]}" | tr '\n' ' '))" unpack_sources
srcdir() { find "$prefix/src" -maxdepth 1 -mindepth 1 -type d -name "$1-*" | head -1; }

# Nothing of the build machine's own libraries: only the prefix is searched.
export PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig"
export CC="$prefix/bin/cc" CXX="$prefix/bin/c++" AR="$prefix/bin/ar" RANLIB="$prefix/bin/ranlib"
cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib
            -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_IGNORE_PREFIX_PATH="/usr;/usr/local" -DBUILD_SHARED_LIBS=OFF
            -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_TESTING=OFF)

build_openssl() {
  cd "$(srcdir openssl)"
  ./Configure "${openssl_options[@]}" --prefix="$prefix" >/dev/null
  make -j"$jobs" build_libs >/dev/null
  make install_dev >/dev/null
}
timed "OpenSSL ($(basename "$(srcdir openssl)"))" build_openssl

build_curl() {
  local src
  src="$(srcdir curl)"
  cmake -S "$src" -B "$src/build" "${cmake_args[@]}" -DOPENSSL_ROOT_DIR="$prefix" "${curl_options[@]}" >/dev/null
  cmake --build "$src/build" -j"$jobs" >/dev/null
  cmake --install "$src/build" >/dev/null
}
timed "libcurl ($(basename "$(srcdir curl)"))" build_curl

install_headers() {
  local src
  src="$(srcdir nlohmann-json3)"
  cmake -S "$src" -B "$src/build" "${cmake_args[@]}" -DJSON_BuildTests=OFF -DJSON_Install=ON >/dev/null
  cmake --install "$src/build" >/dev/null
  src="$(srcdir cli11)"
  cmake -S "$src" -B "$src/build" "${cmake_args[@]}" -DCLI11_BUILD_TESTS=OFF -DCLI11_BUILD_EXAMPLES=OFF \
    -DCLI11_BUILD_DOCS=OFF -DCLI11_INSTALL=ON >/dev/null
  cmake --install "$src/build" >/dev/null
  # toml++ and cpp-httplib header-only, described as Debian's pkg-config files describe them.
  cp -r /usr/include/toml++ "$prefix/include/"
  cp "$(srcdir cpp-httplib)/httplib.h" "$prefix/include/"
  cat >"$prefix/lib/pkgconfig/tomlplusplus.pc" <<EOF
prefix=$prefix
Name: tomlplusplus
Description: TOML config file parser and serializer for C++ (header-only)
Version: ${toml_version%%+*}
Cflags: -I\${prefix}/include -DTOML_HEADER_ONLY=1
EOF
  cat >"$prefix/lib/pkgconfig/cpp-httplib.pc" <<EOF
prefix=$prefix
Name: cpp-httplib
Description: A C++ HTTP/HTTPS server and client library (header-only)
Version: $(sed -n 's/^#define CPPHTTPLIB_VERSION "\(.*\)"/\1/p' "$prefix/include/httplib.h")
Requires: libssl libcrypto
Cflags: -I\${prefix}/include -DCPPHTTPLIB_OPENSSL_SUPPORT
EOF
}
timed "nlohmann-json, CLI11, toml++, cpp-httplib (headers)" install_headers

# The toolchain file: CMake builds with these compilers, against this prefix only.
cat >"$prefix/toolchain.cmake" <<EOF
# Written by scripts/portable_toolchain.sh: zig's clang for $target, libraries from $prefix only.
set(KERNELHUB_PORTABLE_TARGET "$target")
$(if [ "$arch" != "$(uname -m)" ]; then printf 'set(CMAKE_SYSTEM_NAME Linux)\nset(CMAKE_SYSTEM_PROCESSOR %s)\n' "$arch"; fi)
set(CMAKE_C_COMPILER "$prefix/bin/cc")
set(CMAKE_CXX_COMPILER "$prefix/bin/c++")
set(CMAKE_AR "$prefix/bin/ar" CACHE FILEPATH "")
set(CMAKE_RANLIB "$prefix/bin/ranlib" CACHE FILEPATH "")
list(PREPEND CMAKE_PREFIX_PATH "$prefix")
set(CMAKE_IGNORE_PREFIX_PATH /usr /usr/local)
set(PKG_CONFIG_EXECUTABLE "$(command -v pkg-config)" CACHE FILEPATH "")
set(ENV{PKG_CONFIG_LIBDIR} "$prefix/lib/pkgconfig")
set(OPENSSL_USE_STATIC_LIBS ON)
EOF
rm -rf "$prefix/src" "$prefix/.timed"
du -sh "$prefix" | cut -f1 | sed 's/^/size: /' >>"$times"
touch "$prefix/.complete"
say "done: $(tr '\n' ';' <"$times")"
echo "$prefix/toolchain.cmake"
