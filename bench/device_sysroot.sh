# Sourced by every GPU-machine script: the one way to build kernelhub there. Unpacks the Debian
# development packages the image lacks (bench/device_debs.sh downloads them into .debs/; the call
# carries them: `carry: [".debs"]`) into /tmp/sysroot, never into /, and points the build at them
# ($sysroot: pass -DCMAKE_PREFIX_PATH="$sysroot/usr"). Headers come from the .debs; at run time
# the image's libcurl/OpenSSL are used, and only toml++, cpp-httplib and brotli come from the
# sysroot.
sysroot=/tmp/sysroot
mkdir -p "$sysroot"
if ! compgen -G ".debs/libtomlplusplus-dev_*.deb" >/dev/null; then
  echo "device_sysroot: .debs/ is missing or old: run bench/device_debs.sh here and carry .debs" >&2
  exit 1
fi
for f in .debs/*.deb; do dpkg -x "$f" "$sysroot"; done
sysroot_lib="$sysroot/usr/lib/x86_64-linux-gnu"
rm -f "$sysroot_lib"/*.a "$sysroot_lib"/libcurl.so.4* "$sysroot_lib"/libssl.so.3 "$sysroot_lib"/libcrypto.so.3
for l in libcurl libssl libcrypto; do
  so=$(ls /usr/lib/x86_64-linux-gnu/$l.so.* 2>/dev/null | head -1)
  [ -n "$so" ] && ln -sf "$so" "$sysroot_lib/$l.so"
done
export PKG_CONFIG_PATH="$sysroot_lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$sysroot"
mkdir -p /tmp/httplib-runtime
for so in "$sysroot_lib"/libcpp-httplib.so.0* "$sysroot_lib"/libbrotli*.so.1* "$sysroot_lib"/libtomlplusplus.so.3*; do
  [ -e "$so" ] && ln -sf "$so" /tmp/httplib-runtime/
done
export LD_LIBRARY_PATH="/tmp/httplib-runtime:${LD_LIBRARY_PATH:-}"
command -v pkg-config >/dev/null || export PATH="$sysroot/usr/bin:$PATH"
# The kernel libraries must share torch's C++ runtime: the image's own compiler (/opt/gcc) links
# libstdc++ statically, which makes every failing TORCH_CHECK crash instead of raising (the
# exception crosses two runtimes). The distribution's g++ links the shared one.
if [ -x /usr/bin/g++ ]; then
  export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++
fi
# Python packages the image lacks travel as wheels in .whl/ (`carry: [".whl"]`): a wheel is a zip
# of its installed files, and the image's venv may have no pip.
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -c 'import sys, zipfile; [zipfile.ZipFile(w).extractall("/tmp/site") for w in sys.argv[1:]]' .whl/*.whl &&
    export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
fi
