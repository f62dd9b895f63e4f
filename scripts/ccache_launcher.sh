#!/bin/sh
# The compiler launcher of every build (Makefile): ccache where it is installed, the compiler itself
# where not. A launcher that looks each time, rather than a Makefile that looks once, lets the
# first build of a fresh machine (whose `make` started before bootstrap installed ccache) fill the
# cache too. Paths inside the checkout are hashed relative to it (CCACHE_BASEDIR, and not the
# working directory), so a clone in another folder (CI's clean clone) reuses what any clone
# compiled; the debug information of such a hit names the folder it was first compiled in.
if command -v ccache >/dev/null 2>&1; then
  CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd "$(dirname "$0")/.." && pwd -P)}"
  CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
  # The Makefile's size for every compile, also one run outside make (a build script, `cmake
  # --build`): ccache trims the cache to the size of whichever call runs, and its default 5 GB
  # would drop what the three builds and the cross builds keep.
  CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-20G}"
  export CCACHE_BASEDIR CCACHE_NOHASHDIR CCACHE_MAXSIZE
  exec ccache "$@"
fi
exec "$@"
