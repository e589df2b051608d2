#!/usr/bin/env bash
# Runs every libFuzzer target of the fuzz build for a bounded time, each on a
# scratch copy of its seed corpus (fuzz/corpus/<name>/ for build/fuzz/bin/<name>_fuzzer).
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shopt -s nullglob
targets=(build/fuzz/bin/*_fuzzer)
if ((${#targets[@]} == 0)); then
  echo "no fuzz targets built (cmake --preset fuzz && cmake --build --preset fuzz)" >&2
  exit 1
fi
for target in "${targets[@]}"; do
  name=$(basename "$target" _fuzzer)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  if [[ -d fuzz/corpus/$name ]]; then cp -r "fuzz/corpus/$name/." "$work/"; fi
  echo "fuzzing $name for ${seconds}s"
  "$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$work/" "$work" 2>&1 | tail -n 12
  rm -rf "$work"
  trap - EXIT
done
