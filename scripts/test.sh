#!/usr/bin/env bash
# One command: build everything and run every test — the release build, the
# AddressSanitizer + UndefinedBehaviorSanitizer build, and a bounded fuzzing run.
#   FUZZ_SECONDS=N   how long the reader fuzzer runs (default 60; 0 skips it)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

step() { echo; echo "== $*"; }

step "release build"
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
step "release tests"
ctest --preset release -j "$jobs"

step "sanitizer build (ASan + UBSan)"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"
step "sanitizer tests"
ctest --preset asan -j "$jobs"

fuzz_seconds=${FUZZ_SECONDS:-60}
if ((fuzz_seconds > 0)); then
  step "fuzzing the reader for ${fuzz_seconds}s (libFuzzer + ASan)"
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz -j "$jobs"
  scripts/fuzz.sh "$fuzz_seconds"
fi
