#!/usr/bin/env bash
# One command on a fresh Debian machine: install dependencies, build memloupe, and
# profile the bundled demo program.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release

bin=build/release/bin
trace=build/demo.trace
echo
echo "== memloupe run -- memloupe_demo"
"$bin/memloupe" run -o "$trace" -- "$bin/memloupe_demo"
echo
echo "== memloupe summary $trace"
"$bin/memloupe" summary "$trace"
echo
echo "Next: $bin/memloupe report $trace -o build/demo.html   (open it in a browser)"
