#!/usr/bin/env bash
# Installs memloupe's build and test dependencies from Debian's packages.
# The one list of packages: setup.sh and .ci/run both call this.
set -euo pipefail

packages=(
  # build
  g++ clang cmake ninja-build pkg-config git
  # libraries
  libdw-dev libelf-dev libunwind-dev libzstd-dev zlib1g-dev libfmt-dev libcli11-dev
  libiberty-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev libclang-rt-14-dev
  python3 nodejs golang-go chromium valgrind heaptrack sqlite3
  # `memloupe live`'s terminal test
  tmux
  # the install test: the man page renders, the zsh completion loads
  man-db zsh
  # allocators that `memloupe replay` compares against glibc's
  libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
