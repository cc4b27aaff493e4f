#!/usr/bin/env bash
# Benchmark (not a test): the partial state's text round trip (format on a
# Citus worker, parse on the coordinator: one per group and shard), built
# against a baseline commit's src/core ("before", default 972747d: printf and
# sscanf) and the working tree ("after"); 7 alternating rounds, medians and
# the after/before ratio.
#   test/bench/bench_state_text.sh [BASELINE_COMMIT] [STATES]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
baseline=${1:-972747d}
states=${2:-300000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CXX=${CXX:-g++}
FLAGS=(-std=c++17 -O2)
mkdir -p "$work/src_before"
git -C "$root" archive "$baseline" src/core | tar -x -C "$work/src_before"
for side in before after; do
  core=$([[ $side == before ]] && echo "$work/src_before/src/core" || echo "$root/src/core")
  "$CXX" "${FLAGS[@]}" -I"$core" -o "$work/$side" "$here/state_text_bench.cpp" \
    "$core/state_text.cpp" "$core/grid_value.cpp" -lmpfr -lgmp
done
for round in 1 2 3 4 5 6 7; do
  echo "before $("$work/before" "$states")" >>"$work/times"
  echo "after $("$work/after" "$states")" >>"$work/times"
done
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
b=$(awk '$1 == "before" { print $2 }' "$work/times" | median)
a=$(awk '$1 == "after" { print $2 }' "$work/times" | median)
echo "partial state text round trip, ns per state (median of 7, $states states; load $(cut -d' ' -f1-3 /proc/loadavg)):"
echo "  before ($baseline): $b   after (working tree): $a   after/before: $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
