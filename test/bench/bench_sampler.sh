#!/usr/bin/env bash
# Builds test/bench/sampler_bench.cpp against a baseline commit's src/core
# ("before", default: the commit before the constant-time samplers) and against
# the working tree ("after"), and runs both.
#   test/bench/bench_sampler.sh [BASELINE_COMMIT] [DRAWS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
baseline=${1:-cfda698}
draws=${2:-200000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CXX=${CXX:-g++}
FLAGS=(-std=c++17 -O2 -Wall)

mkdir -p "$work/before"
git -C "$root" archive "$baseline" src/core | tar -x -C "$work/before"
"$CXX" "${FLAGS[@]}" -I"$work/before/src/core" -o "$work/bench_before" \
  "$here/sampler_bench.cpp" "$work"/before/src/core/*.cpp -lssl -lcrypto -lmpfr -lgmp
"$CXX" "${FLAGS[@]}" -I"$root/src/core" -o "$work/bench_after" \
  "$here/sampler_bench.cpp" "$root"/src/core/*.cpp -lssl -lcrypto -lmpfr -lgmp

"$work/bench_before" "before ($baseline)" "$draws"
echo
"$work/bench_after" "after (working tree)" "$draws"
