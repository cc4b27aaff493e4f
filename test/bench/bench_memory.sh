#!/usr/bin/env bash
# Peak memory of one backend running dp_median / dp_select against
# percentile_cont / mode() over bench_t (created by bench_aggregates.sh), read
# from /proc/<pid>/status (VmHWM, the resident high-water mark) after each
# query in a fresh session. Not a test: prints figures.
#   test/bench/bench_memory.sh      (needs a running cluster and bench_t)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if [[ -f "$ROOT/.cluster_env" ]]; then
  # shellcheck disable=SC1091
  . "$ROOT/.cluster_env"
fi
rows=$(psql -X -At -c "SELECT count(*) FROM bench_t")
echo "bench_t: $rows rows; peak resident memory (VmHWM) of the backend after one query"
echo
echo "| query | peak RSS MiB |"
echo "|---|---:|"
peaks=()
for query in \
  "SELECT 1" \
  "SELECT dp_median(f, 0.0, 1.0, 1.0) FROM bench_t" \
  "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY f) FROM bench_t" \
  "SELECT dp_select(i % 10, ARRAY[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 1.0) FROM bench_t" \
  "SELECT mode() WITHIN GROUP (ORDER BY i % 10) FROM bench_t"; do
  # One session per query; the backend reads its own high-water mark.
  kib=$(psql -X -At -c "SET max_parallel_workers_per_gather = 0" -c "$query" \
    -c "SELECT (regexp_match(pg_read_file('/proc/self/status'), 'VmHWM:\s+(\d+)'))[1]" | tail -1)
  echo "| \`$query\` | $(awk -v k="$kib" 'BEGIN { printf "%.1f", k / 1024 }') |"
  peaks+=("$kib")
done
# Above dp_select's peak (a constant-size state over the same scan, so the
# shared buffers the scan touches cancel out): what each quantile state added.
awk -v base="${peaks[3]}" -v dp="${peaks[1]}" -v pc="${peaks[2]}" -v rows="$rows" 'BEGIN {
  printf "\nabove dp_select: dp_median %.1f MiB (%.1f bytes a row), percentile_cont %.1f MiB\n",
    (dp - base) / 1024, (dp - base) * 1024 / rows, (pc - base) / 1024 }'
