#!/bin/sh
# The compiler launcher of every build (Makefile): ccache where it is installed, the compiler itself
# where not. A launcher that looks each time, rather than a Makefile that looks once, lets the
# first build of a fresh machine (whose `make` started before bootstrap installed ccache) fill the
# cache too.
if command -v ccache >/dev/null 2>&1; then
  exec ccache "$@"
fi
exec "$@"
