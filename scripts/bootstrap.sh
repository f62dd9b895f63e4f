#!/usr/bin/env bash
# Installs what building and testing kernelhub needs, and is quick when it is already there.
#
#   scripts/bootstrap.sh            what building and the demo need: Debian packages + the Python
#                                   environment of requirements.txt
#   scripts/bootstrap.sh --test     that, and what only the tests and the release artifacts use
#                                   (nix-bin, nginx-light; requirements-dev.txt, kernels 0.17.2,
#                                   requirements-oracle-sigstore.txt)
#   scripts/bootstrap.sh --apt      Debian packages only (--apt --test: with the tests' ones)
#   scripts/bootstrap.sh --venv     the Python environment only (--venv --test: with the tests' packages)
#
# The Python environment (torch is ~3 GB) lives outside the checkout, in
# ${KERNELHUB_TOOLS_CACHE:-$HOME/.cache/kernelhub}/venv-<key>, where <key> hashes
# requirements.txt and the Python version, so a warm machine reuses it and a change of
# requirements builds a new one. The tests' packages are added to it once per content of
# requirements-dev.txt and requirements-oracle-sigstore.txt (a .complete-test-<hash> marker).
# `.venv` in the checkout is a link to it.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

apt_packages=(
  build-essential cmake ninja-build pkg-config git ccache
  libcurl4-openssl-dev libssl-dev nlohmann-json3-dev catch2 libcpp-httplib-dev
  libtomlplusplus-dev libcli11-dev
  python3-venv
)
# Only the tests use these (`make test`); `make demo` does without them.
test_apt_packages=(
  nix-bin  # evaluates the Nix build matrix (nix/) in the tests, without network
  nginx-light  # the site cache of the cluster tests (docs/nginx/), started by them on loopback
)

say() { printf '\033[1m[bootstrap]\033[0m %s\n' "$*" >&2; }

install_apt() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    return 0
  fi
  say "installing Debian packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

pick_python() {
  # A Python with its headers (the abi3 kernel library includes Python.h).
  for candidate in "${KERNELHUB_PYTHON:-}" python3.12 python3.11 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
      "$candidate" -c 'import sysconfig,os,sys; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_paths()["include"],"Python.h")) else 1)' 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  say "no Python 3 with development headers found; install python3-dev"
  return 1
}

install_venv() {
  local python key cache venv test_key
  python="$(pick_python)"
  key="$( (cat requirements.txt; "$python" -c 'import sys; print(sys.version)') | sha256sum | cut -c1-16)"
  cache="${KERNELHUB_TOOLS_CACHE:-$HOME/.cache/kernelhub}"
  venv="$cache/venv-$key"
  mkdir -p "$cache"
  # Several checkouts (worktrees, CI beside a developer) may bootstrap at once: one builds the
  # environment, the others wait for it instead of removing it under the first.
  exec 9>"$venv.lock"
  flock 9
  if [ ! -f "$venv/.complete" ]; then
    say "building the Python environment in $venv (first time only; torch is large)"
    rm -rf "$venv"
    mkdir -p "$cache"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --upgrade pip
    "$venv/bin/python" -m pip install -q --progress-bar off -r requirements.txt
    touch "$venv/.complete"
  fi
  if [ -n "$with_test" ]; then
    test_key="$(cat requirements-dev.txt requirements-oracle-sigstore.txt | sha256sum | cut -c1-16)"
    if [ ! -f "$venv/.complete-test-$test_key" ]; then
      say "adding the tests' Python packages (requirements-dev.txt) to $venv"
      "$venv/bin/python" -m pip install -q --progress-bar off -r requirements.txt -r requirements-dev.txt
      # kernels 0.17.2, the release users of older kernels run, as a second oracle beside 0.19.1:
      # its own folder, put first on PYTHONPATH by the tests that ask for it (its dependencies are
      # the environment's).
      rm -rf "$venv/oracles/kernels-0.17.2"
      "$venv/bin/python" -m pip install -q --progress-bar off --no-deps \
        --target "$venv/oracles/kernels-0.17.2" kernels==0.17.2
      # sigstore 4.5.1, kernels[sigstore]'s verifier, with its dependencies in a folder of its own:
      # importable in the environment, it would make kernels 0.19.1 verify signatures in every test.
      rm -rf "$venv/oracles/sigstore-4.5.1"
      "$venv/bin/python" -m pip install -q --progress-bar off \
        --target "$venv/oracles/sigstore-4.5.1" -r requirements-oracle-sigstore.txt
      touch "$venv/.complete-test-$test_key"
    fi
  fi
  flock -u 9
  if [ "$(readlink .venv 2>/dev/null || true)" != "$venv" ]; then
    rm -rf .venv
    ln -s "$venv" .venv
  fi
}

apt_set=("${apt_packages[@]}")
what=all
with_test=
for arg in "$@"; do
  case "$arg" in
    --test) apt_set+=("${test_apt_packages[@]}") with_test=yes ;;
    --apt) what=apt ;;
    --venv) what=venv ;;
    *) echo "usage: $0 [--test] [--apt|--venv]" >&2; exit 2 ;;
  esac
done
case "$what" in
  apt) install_apt "${apt_set[@]}" ;;
  venv) install_venv ;;
  all) install_apt "${apt_set[@]}"; install_venv ;;
esac
