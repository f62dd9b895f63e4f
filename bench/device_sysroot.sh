# Sourced by the GPU-machine scripts: unpacks the Debian development packages the image lacks
# (carried in .debs/, `carry: [".debs"]`) into /tmp/sysroot, never into /, and points the build
# at them. Headers come from the .debs; at run time the image's libcurl/OpenSSL are used, and only
# cpp-httplib and brotli (for `kernelhub serve`) come from the sysroot.
#   apt-get download libssl-dev libcurl4-openssl-dev nlohmann-json3-dev libcpp-httplib-dev \
#     libcpp-httplib0.11 libbrotli-dev zlib1g-dev pkg-config libpkgconf3 pkgconf pkgconf-bin
sysroot=/tmp/sysroot
mkdir -p "$sysroot"
for f in .debs/*.deb; do dpkg -x "$f" "$sysroot"; done
sysroot_lib="$sysroot/usr/lib/x86_64-linux-gnu"
rm -f "$sysroot_lib"/*.a "$sysroot_lib"/libcurl.so.4* "$sysroot_lib"/libssl.so.3 "$sysroot_lib"/libcrypto.so.3
for l in libcurl libssl libcrypto; do
  so=$(ls /usr/lib/x86_64-linux-gnu/$l.so.* 2>/dev/null | head -1)
  [ -n "$so" ] && ln -sf "$so" "$sysroot_lib/$l.so"
done
export PKG_CONFIG_PATH="$sysroot_lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$sysroot"
mkdir -p /tmp/httplib-runtime
for so in "$sysroot_lib"/libcpp-httplib.so.0* "$sysroot_lib"/libbrotli*.so.1*; do
  [ -e "$so" ] && ln -sf "$so" /tmp/httplib-runtime/
done
export LD_LIBRARY_PATH="/tmp/httplib-runtime:${LD_LIBRARY_PATH:-}"
command -v pkg-config >/dev/null || export PATH="$sysroot/usr/bin:$PATH"
